/** The caller, as established by the token authorizer. */
export interface Principal {
  readonly role: string;
  readonly superuser: boolean;
}
