/**
 * Exactly the DynamoDB operations the adapters in shared/adapters/dynamodb/
 * call (test/infra checks the two lists agree). Deletes go through
 * BatchWriteItem; conditional writes need no action of their own.
 */
export const tableItemActions = [
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:Query',
  'dynamodb:BatchGetItem',
  'dynamodb:BatchWriteItem',
  // listAllTopics: the queue rebuild scans the catalog (recovery, not requests).
  'dynamodb:Scan',
] as const;
