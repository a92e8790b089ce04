/** durable-pg: workflows and activities on durable, the PostgreSQL workflow engine. */
export { Client, WorkflowHandle, ResultTimeoutError, newWorkflowId } from './client';
export type {
  ClientOptions, StartOptions, EagerStartWorker, IdReusePolicy, WorkflowStatus, WorkflowDescription, WorkflowExecutionInfo,
  WorkflowFilter, ListWorkflowsFilter, HistoryEvent,
} from './client';
export { TaskQueueClient, TaskQueueHandle, BatchClient, BatchHandle, BatchWaitTimeoutError } from './operations';
export type {
  TaskQueueKind, TaskQueuePoller, TaskQueueLimits, TaskQueueKindInfo, TaskQueuePause, TaskQueueDescription,
  TaskQueueLimitOptions, TaskQueueKeyLimitOptions, TaskQueueKeyInfo, BatchOperation, BatchResetPoint, BatchFilter,
  BatchOperationOptions, BatchOptions, BatchPreviewOptions, BatchState, BatchDescription, BatchError,
} from './operations';
export type { ConnectionOptions, ConnectionConfig, PoolLike, PoolClientLike, QueryResultLike } from './connection';
export {
  DurableError, WorkflowAlreadyStartedError, WorkflowNotFoundError, WorkflowNotRunningError, StaleTaskTokenError,
  LimitExceededError, PermissionDeniedError, InvalidArgumentError, WorkflowFailedError, ApplicationFailure,
  CancelledError, ActivityFailure, ChildWorkflowFailure, ExternalWorkflowError, NonDeterminismError,
} from './errors';
export type { DatabaseErrorFields } from './errors';
export { NotJsonError } from './json';
export type { JsonValue, JsonObject, JsonPrimitive, Duration, RetryPolicy } from './json';
export {
  ActivityWorker, activityContext, activityInfo, heartbeat, NON_RETRYABLE_REASON, WORKER_SHUTDOWN_REASON,
  UNKNOWN_ACTIVITY_REASON,
} from './activity';
export type { ActivityContext, ActivityInfo, ActivityFunction, ActivityWorkerOptions } from './activity';
export { WorkflowWorker, Worker } from './worker';
export type { WorkflowWorkerOptions, WorkerOptions, WorkflowWorkerStats } from './worker';
export { ContinueAsNew, DEFAULT_VERSION } from './workflow';
export type {
  WorkflowContext, WorkflowFunction, WorkflowInfo, ActivityOptions, ChildWorkflowOptions, ChildWorkflowHandle,
  ContinueAsNewOptions,
  ExternalWorkflowOptions, ParentClosePolicy,
} from './workflow';
export type { Logger } from './backoff';
export { replayHistories, replayHistory } from './replayer';
export type { ReplayHistoriesOptions, ReplayHistoryOptions, ReplayResult, ReplayEvent } from './replayer';
