export type { LiveRun, RetireReason, Spare, Worker, WorkerFit, WorkerInfo, WorkerPoolOptions } from './types.js';
export { availableMemory, createMemoryGauge, defaultMaxWorkers } from './memory.js';
export { createWorkerPool, type WorkerPool } from './pool.js';

/** The pool key of a session slot's worker: one key's one backend's one slot. */
export function workerSlot(keyId: string, backend: string, slot: number): string {
  return `${keyId}/${backend}/${slot}`;
}

export { watchKeyStanding, type KeyHolder } from './standing.js';
export { createProcessCap, defaultMaxProcesses, type ProcessCap, type ProcessTicket } from './cap.js';
export { defaultWorkerMemory, keyShareBytes, WORKER_BYTES } from './budget.js';
