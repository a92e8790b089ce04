/**
 * Errors of durable-pg.  Every error that comes from the database is a
 * DurableError carrying the SQLSTATE durable raised (docs/errors.md "Errors"); the
 * engine's own conditions (WF00x) and the common argument errors have their
 * own subclass so that callers can `instanceof` them.
 */

/** Fields of a PostgreSQL error that durable-pg passes on. */
export interface DatabaseErrorFields {
  readonly sqlstate: string;
  readonly detail?: string;
  readonly hint?: string;
}

/** Every error that the database returned for a durable call. */
export class DurableError extends Error {
  readonly sqlstate: string;
  readonly detail: string | undefined;
  readonly hint: string | undefined;

  constructor(message: string, fields: DatabaseErrorFields) {
    super(message);
    this.name = new.target.name;
    this.sqlstate = fields.sqlstate;
    this.detail = fields.detail;
    this.hint = fields.hint;
  }
}

/** WF001: a run of the workflow id is running, or the id reuse policy forbids a new run. */
export class WorkflowAlreadyStartedError extends DurableError {}
/** WF002: workflow, run or namespace not found. */
export class WorkflowNotFoundError extends DurableError {}
/** WF003: the workflow is not running. */
export class WorkflowNotRunningError extends DurableError {}
/** WF005: the task token is stale (its attempt timed out, was retried, completed, or the run closed). */
export class StaleTaskTokenError extends DurableError {}
/** WF006: a limit was exceeded (payload size, history length, pending activities). */
export class LimitExceededError extends DurableError {}
/** 42501: the role lacks a privilege (a group role or a namespace privilege). */
export class PermissionDeniedError extends DurableError {}

/**
 * 22023, 22P02 or 22004: an argument was refused.  `argument` is the name of
 * the argument (or field) the message names, when it names one.
 */
export class InvalidArgumentError extends DurableError {
  readonly argument: string | undefined;

  constructor(message: string, fields: DatabaseErrorFields, argument?: string) {
    super(message, fields);
    this.argument = argument ?? argumentOf(message);
  }
}

/**
 * The argument a message of durable names: "run_timeout must be ...",
 * "decisions[0].activityId is required", "invalid id_reuse_policy "x"",
 * "status "x" is not a workflow status".
 */
function argumentOf(message: string): string | undefined {
  if (/^invalid input syntax/.test(message)) return undefined;
  const inv = /^invalid ([A-Za-z_][\w.[\]]*)\b/.exec(message);
  if (inv) return inv[1];
  const m = /^"?([A-Za-z_][\w.[\]]*)"? (?:"[^"]*" )?(?:must|is|are|may|has|cannot|should|does)\b/.exec(message);
  return m ? m[1] : undefined;
}

const bySqlstate: Record<string, new (message: string, fields: DatabaseErrorFields) => DurableError> = {
  WF001: WorkflowAlreadyStartedError,
  WF002: WorkflowNotFoundError,
  WF003: WorkflowNotRunningError,
  WF005: StaleTaskTokenError,
  WF006: LimitExceededError,
  '42501': PermissionDeniedError,
  '22023': InvalidArgumentError,
  '22P02': InvalidArgumentError,
  '22004': InvalidArgumentError,
};

interface PgErrorLike {
  message: string;
  code?: unknown;
  detail?: unknown;
  hint?: unknown;
}

function isPgError(e: unknown): e is PgErrorLike {
  const code = e instanceof Error ? (e as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}

/** The DurableError for an error of the pg driver; other errors unchanged. */
export function fromDatabaseError(e: unknown): unknown {
  if (!isPgError(e)) return e;
  const fields: DatabaseErrorFields = {
    sqlstate: e.code as string,
    detail: typeof e.detail === 'string' ? e.detail : undefined,
    hint: typeof e.hint === 'string' ? e.hint : undefined,
  };
  const cls = bySqlstate[fields.sqlstate] ?? DurableError;
  const err = new cls(e.message, fields);
  err.cause = e;
  return err;
}

/** A workflow's chain closed without completing: failed, timed out, canceled or terminated. */
export class WorkflowFailedError extends Error {
  readonly workflowId: string;
  readonly runId: string;
  /** failed, timed_out, canceled or terminated. */
  readonly status: string;
  /** The failure's reason (for failed and timed_out). */
  readonly reason: string | undefined;
  /** The failure's details. */
  readonly details: unknown;

  constructor(workflowId: string, runId: string, status: string, reason: string | undefined, details: unknown) {
    super(`workflow ${workflowId} (run ${runId}) ${status.replace('_', ' ')}` +
      (reason !== undefined ? `: ${reason}` : ''));
    this.name = 'WorkflowFailedError';
    this.workflowId = workflowId;
    this.runId = runId;
    this.status = status;
    this.reason = reason;
    this.details = details;
  }
}

/**
 * An error an activity (or workflow) throws to choose its failure reason
 * (`type`, default the error's name) and whether the failure may be retried.
 */
export class ApplicationFailure extends Error {
  readonly type: string | undefined;
  readonly nonRetryable: boolean;
  readonly details: unknown;

  constructor(message: string, options: { type?: string; nonRetryable?: boolean; details?: unknown } = {}) {
    super(message);
    this.name = 'ApplicationFailure';
    this.type = options.type;
    this.nonRetryable = options.nonRetryable ?? false;
    this.details = options.details;
  }

  static nonRetryable(message: string, type?: string, details?: unknown): ApplicationFailure {
    return new ApplicationFailure(message, { type, nonRetryable: true, details });
  }
}

/** Thrown in workflow code when the workflow's cancellation was requested. */
export class CancelledError extends Error {
  constructor(message = 'the workflow was asked to cancel') {
    super(message);
    this.name = 'CancelledError';
  }
}

/** An activity failed for good (its retries exhausted, a non-retryable reason, a timeout). */
export class ActivityFailure extends Error {
  readonly activityType: string;
  readonly activityId: string;
  /** The last attempt's reason: the error's name or ApplicationFailure type, or durable:Timeout ... */
  readonly reason: string;
  readonly details: unknown;

  constructor(activityType: string, activityId: string, reason: string, details: unknown) {
    super(`activity ${activityType} (${activityId}) failed: ${reason}` + detailMessage(details));
    this.name = 'ActivityFailure';
    this.activityType = activityType;
    this.activityId = activityId;
    this.reason = reason;
    this.details = details;
  }
}

/** A child workflow ended without completing (or could not start). */
export class ChildWorkflowFailure extends Error {
  readonly workflowType: string;
  readonly workflowId: string;
  /** failed, timed_out, canceled, terminated or start_failed. */
  readonly status: string;
  readonly reason: string | undefined;
  readonly details: unknown;

  constructor(workflowType: string, workflowId: string, status: string, reason: string | undefined, details: unknown) {
    super(`child workflow ${workflowType} (${workflowId}) ${status.replace('_', ' ')}` +
      (reason !== undefined ? `: ${reason}` : '') + detailMessage(details));
    this.name = 'ChildWorkflowFailure';
    this.workflowType = workflowType;
    this.workflowId = workflowId;
    this.status = status;
    this.reason = reason;
    this.details = details;
  }
}

/** A signal or cancel request to another workflow could not be delivered. */
export class ExternalWorkflowError extends Error {
  readonly workflowId: string;
  readonly failureCause: string;

  constructor(what: string, workflowId: string, cause: string) {
    super(`${what} to workflow ${workflowId} failed: ${cause}`);
    this.name = 'ExternalWorkflowError';
    this.workflowId = workflowId;
    this.failureCause = cause;
  }
}

/**
 * The history of a run does not match the commands its code issues (the code
 * changed under a running workflow).  The decision task is failed with cause
 * NonDeterministicWorkflow and is tried again until fixed code answers it.
 */
export class NonDeterminismError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NonDeterminismError';
  }
}

function detailMessage(details: unknown): string {
  if (details !== null && typeof details === 'object' && 'message' in details &&
      typeof (details as { message: unknown }).message === 'string') {
    return ` (${(details as { message: string }).message})`;
  }
  return '';
}
