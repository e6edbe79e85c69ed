/**
 * Why a worker is retired: logged on its `worker_retired` line; `shutdown` and `revoked` also change
 * how it is stopped.
 */
export type RetireReason =
  | 'failed'
  | 'aborted'
  | 'idle'
  | 'max_age'
  | 'max_turns'
  | 'mismatch'
  | 'rotated'
  | 'evicted'
  | 'no_answer'
  | 'exited'
  | 'shutdown'
  | 'superseded'
  | 'revoked'
  | 'done'
  | 'expired'
  | 'replaced'
  | 'model_changed'
  | 'memory'
  | 'share'
  | 'unused';
