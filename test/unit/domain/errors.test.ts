import { describe, expect, it } from 'vitest';
import { InvalidAckTimeoutError } from '../../../shared/domain/ack-timeout.ts';
import {
  AcklineError,
  ConflictError,
  ForbiddenError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  PreconditionFailedError,
  ServiceUnavailableError,
  UnauthorizedError,
  ValidationError,
} from '../../../shared/domain/errors.ts';
import { InvalidLedgerLayoutError, PositionNotFoundError } from '../../../shared/domain/ledger-layout.ts';
import { InvalidPositionError } from '../../../shared/domain/non-negative-id.ts';
import { InvalidRedeliveryBackoffError } from '../../../shared/domain/redelivery-backoff.ts';
import {
  DuplicateRedeliveryBackoffClassError,
  UnknownRedeliveryBackoffClassError,
} from '../../../shared/domain/redelivery-backoff-registry.ts';
import { InvalidSubscriptionTypeError } from '../../../shared/domain/subscription-type.ts';
import { InvalidTopicNameError } from '../../../shared/domain/topic-name.ts';

type ErrorClass = new (message: string, options?: { cause?: unknown }) => AcklineError;

describe('AcklineError', () => {
  it('keeps the message and the cause', () => {
    // Arrange
    const cause = new Error('low level');

    // Act
    const error = new AcklineError('high level', { cause });

    // Assert
    expect(error.message).toBe('high level');
    expect(error.cause).toBe(cause);
    expect(error).toBeInstanceOf(Error);
  });

  it('has no cause unless given one', () => {
    expect(new AcklineError('x').cause).toBeUndefined();
    expect('cause' in new AcklineError('x')).toBe(false);
  });

  it.each<[ErrorClass, ErrorClass]>([
    [ValidationError, AcklineError],
    [UnauthorizedError, AcklineError],
    [ForbiddenError, AcklineError],
    [NotFoundError, AcklineError],
    [MethodNotAllowedError, AcklineError],
    [ConflictError, AcklineError],
    [PreconditionFailedError, AcklineError],
    [PayloadTooLargeError, AcklineError],
    [ServiceUnavailableError, AcklineError],
    [InvalidTopicNameError, ValidationError],
    [InvalidPositionError, ValidationError],
    [InvalidRedeliveryBackoffError, ValidationError],
    [UnknownRedeliveryBackoffClassError, ValidationError],
    [InvalidAckTimeoutError, ValidationError],
    [InvalidSubscriptionTypeError, ValidationError],
    [DuplicateRedeliveryBackoffClassError, ConflictError],
    [PositionNotFoundError, NotFoundError],
    [InvalidLedgerLayoutError, AcklineError],
  ])('%o is a %o and is named after its class', (errorClass, family) => {
    // Act
    const error = new errorClass('boom');

    // Assert
    expect(error).toBeInstanceOf(family);
    expect(error).toBeInstanceOf(AcklineError);
    expect(error.name).toBe(errorClass.name);
    expect(error.name.endsWith('Error')).toBe(true);
  });

  it.each<[ErrorClass, ErrorClass]>([
    [ValidationError, NotFoundError],
    [NotFoundError, ValidationError],
    [ConflictError, PreconditionFailedError],
    [InvalidLedgerLayoutError, ValidationError],
    [PositionNotFoundError, ValidationError],
  ])('%o is not a %o', (errorClass, other) => {
    expect(new errorClass('x')).not.toBeInstanceOf(other);
  });
});
