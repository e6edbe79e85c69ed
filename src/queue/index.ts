export { fewestHeldFirst, roundRobin } from './policies.js';
export type { Queued, WaitPolicy, WaitRequest } from './types.js';
export { createWaitQueue, type WaitQueue, type WaitQueueOptions } from './wait-queue.js';
