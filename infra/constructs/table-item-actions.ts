/**
 * Exactly the DynamoDB operations the adapters in shared/adapters/dynamodb/
 * call (test/infra checks the two lists agree). Unconditional deletes go
 * through BatchWriteItem, conditional ones (a deletion job's detach, only while
 * the item is still the deleted incarnation's) through DeleteItem.
 */
export const tableItemActions = [
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:Query',
  'dynamodb:BatchGetItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:DeleteItem',
  // listAllTopics: the queue rebuild scans the catalog (recovery, not requests).
  'dynamodb:Scan',
] as const;
