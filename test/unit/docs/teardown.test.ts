import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { queuePrefix, runTimeQueueTags } from '../../../shared/config/resources.ts';
import { REPO_ROOT } from '../../support/embedded-process.ts';

// No stack holds the doorbell queues the functions create at run time, so the documented teardown
// deletes them: by the exact prefix the functions name them with, or by the tags they get.
describe('the documented teardown', () => {
  const deploying = readFileSync(join(REPO_ROOT, 'docs', 'deploying.md'), 'utf8');
  const teardown = deploying.slice(deploying.indexOf('## Tearing down'));

  it("deletes the run-time queues by the stage's own prefix, which no other stage's names start with", () => {
    expect(teardown).toContain(`aws sqs list-queues --queue-name-prefix "${queuePrefix('$STAGE')}"`);
    expect(teardown).toContain('aws sqs delete-queue --queue-url');
  });

  it('finds them by the stage tag they get at CreateQueue', () => {
    const tags = runTimeQueueTags('$STAGE');
    expect(tags).toEqual({ 'ackline:app': 'ackline', 'ackline:stage': '$STAGE' });
    expect(teardown).toContain('Key=ackline:stage,Values=$STAGE');
    expect(teardown).toContain('`ackline:app=ackline` and `ackline:stage=$STAGE`');
  });
});
