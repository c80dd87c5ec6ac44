import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * A Pulsar admin REST client generated at run time from Pulsar's Swagger 2.0 definition
 * (test/fixtures/pulsar-admin-swagger): it knows each operation's path, query and body parameters
 * and response schemas only from the definition, refuses a call the definition does not allow
 * (an undeclared parameter, a missing required one, a value of the wrong type), and checks each
 * answer against what the operation declares: a declared status code (or 2xx), and a JSON body
 * that validates against the declared response schema (`$ref`s resolved into `definitions`;
 * required properties present, property types right, extra properties allowed).
 */

/** A JSON schema as Swagger 2.0 writes one (the subset Pulsar's definition uses). */
export interface SwaggerSchema {
  readonly $ref?: string;
  readonly type?: string;
  readonly format?: string;
  readonly properties?: Readonly<Record<string, SwaggerSchema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: SwaggerSchema | boolean;
  readonly items?: SwaggerSchema;
  readonly enum?: readonly unknown[];
  readonly description?: string;
}

/** One parameter of an operation. */
export interface SwaggerParameter {
  readonly in: 'path' | 'query' | 'body' | 'header' | 'formData';
  readonly name: string;
  readonly required?: boolean;
  readonly type?: string;
  readonly format?: string;
  readonly enum?: readonly string[];
  readonly schema?: SwaggerSchema;
}

/** One operation (a method of a path). */
export interface SwaggerOperation {
  readonly operationId: string;
  readonly parameters?: readonly SwaggerParameter[];
  readonly responses: Readonly<
    Record<string, { readonly description: string; readonly schema?: SwaggerSchema }>
  >;
}

/** The document: Swagger 2.0 with `basePath`, `paths` and `definitions`. */
export interface SwaggerDocument {
  readonly swagger: string;
  readonly basePath: string;
  readonly paths: Readonly<Record<string, Readonly<Record<string, SwaggerOperation>>>>;
  readonly definitions: Readonly<Record<string, SwaggerSchema>>;
}

/** `get /persistent/{tenant}/{namespace}/{topic}/stats`: a method and a path as the definition spells them. */
export interface OperationKey {
  readonly method: string;
  readonly path: string;
}

/** How {@link SwaggerDefinition.validate} names a `$ref` the committed subset does not hold. */
export const MISSING_DEFINITION = 'not checked: the committed subset lacks';

/** The committed definition. */
export const PULSAR_ADMIN_SWAGGER_FILE = fileURLToPath(
  new URL('../fixtures/pulsar-admin-swagger/swagger.json', import.meta.url),
);

/** Reads a Swagger 2.0 definition and answers its operations and schemas. */
export class SwaggerDefinition {
  constructor(readonly document: SwaggerDocument) {
    if (document.swagger !== '2.0') throw new Error(`Not a Swagger 2.0 document: ${document.swagger}`);
  }

  /** @example const definition = SwaggerDefinition.load(); */
  static load(file = PULSAR_ADMIN_SWAGGER_FILE): SwaggerDefinition {
    return new SwaggerDefinition(JSON.parse(readFileSync(file, 'utf8')) as SwaggerDocument);
  }

  /** The operation, or undefined when the definition has none for that method and path. */
  find(key: OperationKey): SwaggerOperation | undefined {
    return this.document.paths[key.path]?.[key.method.toLowerCase()];
  }

  /** The operation; throws when the definition has none. */
  operation(key: OperationKey): SwaggerOperation {
    const found = this.find(key);
    if (!found) throw new Error(`Pulsar's Swagger definition has no operation ${key.method} ${key.path}`);
    return found;
  }

  /** Every `method path` of the definition. */
  operationKeys(): OperationKey[] {
    return Object.entries(this.document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => ({ method, path })),
    );
  }

  /** The schema a `$ref` names, or undefined when the committed subset lacks that definition. */
  resolve(schema: SwaggerSchema): SwaggerSchema | undefined {
    if (schema.$ref === undefined) return schema;
    return this.document.definitions[schema.$ref.replace(/^#\/definitions\//, '')];
  }

  /** Where `value` disagrees with `schema`, one line each (empty when it validates). */
  validate(schema: SwaggerSchema, value: unknown, where = '$'): string[] {
    if (value === null || value === undefined) return [];
    const resolved = this.resolve(schema);
    if (!resolved) return [`${where}: ${MISSING_DEFINITION} ${schema.$ref}`];
    const problems: string[] = [];
    const type = resolved.type ?? (resolved.properties ? 'object' : undefined);
    switch (type) {
      case 'object': {
        if (typeof value !== 'object' || Array.isArray(value)) return [`${where}: expected an object`];
        const record = value as Record<string, unknown>;
        for (const name of resolved.required ?? []) {
          if (!(name in record)) problems.push(`${where}.${name}: required, missing`);
        }
        for (const [name, property] of Object.entries(record)) {
          const declared = resolved.properties?.[name];
          if (declared) problems.push(...this.validate(declared, property, `${where}.${name}`));
          else if (typeof resolved.additionalProperties === 'object') {
            problems.push(...this.validate(resolved.additionalProperties, property, `${where}.${name}`));
          }
        }
        return problems;
      }
      case 'array':
        if (!Array.isArray(value)) return [`${where}: expected an array`];
        return resolved.items
          ? value.flatMap((item, index) =>
              this.validate(resolved.items as SwaggerSchema, item, `${where}[${index}]`),
            )
          : [];
      case 'integer':
        return Number.isInteger(value) ? [] : [`${where}: expected an integer, got ${JSON.stringify(value)}`];
      case 'number':
        return typeof value === 'number' ? [] : [`${where}: expected a number, got ${JSON.stringify(value)}`];
      case 'boolean':
        return typeof value === 'boolean'
          ? []
          : [`${where}: expected a boolean, got ${JSON.stringify(value)}`];
      case 'string':
        if (typeof value !== 'string') return [`${where}: expected a string, got ${JSON.stringify(value)}`];
        if (resolved.enum && !resolved.enum.includes(value)) {
          return [`${where}: '${value}' is not one of ${resolved.enum.join(', ')}`];
        }
        return [];
      default:
        return [];
    }
  }
}

/** Values for one call: path parameters, query parameters and the body, by the definition's names. */
export interface CallArguments {
  readonly path?: Readonly<Record<string, string | number>>;
  readonly query?: Readonly<Record<string, string | number | boolean | readonly string[]>>;
  readonly body?: unknown;
}

/** What the stack answered, with the operation that was called. */
export interface SwaggerAnswer {
  readonly key: OperationKey;
  readonly operation: SwaggerOperation;
  readonly status: number;
  readonly contentType: string;
  readonly text: string;
  /** The parsed body when it is JSON, else undefined. */
  readonly body: unknown;
}

/** Calls the operations of a {@link SwaggerDefinition} over HTTP, as a generated client would. */
export class PulsarAdminSwaggerClient {
  constructor(
    readonly definition: SwaggerDefinition,
    readonly baseUrl: string,
    readonly token: string | undefined,
  ) {}

  /**
   * Calls one operation; throws before sending when the arguments do not fit its parameters.
   * @example await client.call({ method: 'get', path: '/tenants/{tenant}' }, { path: { tenant: 'public' } });
   */
  async call(key: OperationKey, args: CallArguments = {}): Promise<SwaggerAnswer> {
    const operation = this.definition.operation(key);
    const parameters = operation.parameters ?? [];
    const declared = (where: SwaggerParameter['in']) => parameters.filter((p) => p.in === where);
    for (const name of Object.keys(args.path ?? {})) {
      if (!declared('path').some((p) => p.name === name))
        throw new Error(`${key.path} has no path parameter ${name}`);
    }
    for (const name of Object.keys(args.query ?? {})) {
      if (!declared('query').some((p) => p.name === name))
        throw new Error(`${key.path} has no query parameter ${name}`);
    }
    const path = key.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const parameter = declared('path').find((p) => p.name === name);
      const value = args.path?.[name];
      if (!parameter || value === undefined) throw new Error(`${key.path}: path parameter ${name} missing`);
      this.checkSimple(parameter, value, key);
      return encodeURIComponent(String(value));
    });
    const query = new URLSearchParams();
    for (const parameter of declared('query')) {
      const value = args.query?.[parameter.name];
      if (value === undefined) {
        if (parameter.required) throw new Error(`${key.path}: query parameter ${parameter.name} missing`);
        continue;
      }
      for (const one of Array.isArray(value) ? value : [value]) {
        this.checkSimple(parameter, one, key);
        query.append(parameter.name, String(one));
      }
    }
    const bodyParameter = declared('body')[0];
    if (args.body !== undefined && !bodyParameter) throw new Error(`${key.path} takes no body`);
    if (bodyParameter?.required && args.body === undefined) throw new Error(`${key.path}: body missing`);
    if (bodyParameter?.schema && args.body !== undefined) {
      // A body schema the committed subset lacks is sent unchecked (the answer still is).
      const problems = this.definition
        .validate(bodyParameter.schema, args.body)
        .filter((problem) => !problem.includes(MISSING_DEFINITION));
      if (problems.length > 0)
        throw new Error(`${key.path}: body does not fit its schema: ${problems.join('; ')}`);
    }
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (args.body !== undefined) headers['content-type'] = 'application/json';
    const search = query.toString();
    const response = await fetch(
      `${this.baseUrl}${this.definition.document.basePath}${path}${search ? `?${search}` : ''}`,
      {
        method: key.method.toUpperCase(),
        headers,
        body: args.body === undefined ? undefined : JSON.stringify(args.body),
      },
    );
    const text = await response.text();
    const contentType = response.headers.get('content-type') ?? '';
    let body: unknown;
    if (contentType.includes('json') && text.length > 0) body = JSON.parse(text);
    return { key, operation, status: response.status, contentType, text, body };
  }

  /**
   * Where an answer disagrees with its operation: a status the operation does not declare (2xx
   * always allowed), or a JSON body that does not validate against the declared schema of its status.
   */
  check(answer: SwaggerAnswer, schemaOverride?: SwaggerSchema): string[] {
    const { operation, status } = answer;
    const where = `${answer.key.method.toUpperCase()} ${answer.key.path} (${operation.operationId}) ${status}`;
    const response = operation.responses[String(status)];
    if (!response && (status < 200 || status > 299)) return [`${where}: status not declared`];
    const schema = schemaOverride ?? response?.schema;
    if (!schema || answer.body === undefined) return [];
    return this.definition.validate(schema, answer.body).map((problem) => `${where}: ${problem}`);
  }

  private checkSimple(parameter: SwaggerParameter, value: unknown, key: OperationKey): void {
    const problems = this.definition.validate({ type: parameter.type, enum: parameter.enum }, value);
    if (problems.length > 0)
      throw new Error(`${key.path}: parameter ${parameter.name}: ${problems.join('; ')}`);
  }
}
