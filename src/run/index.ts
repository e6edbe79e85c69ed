export { createTurnRunner, type ParkedClaim, type TurnRequest, type TurnResult, type TurnRunner } from './runner.js';
// The planners, for their unit tests: the conversation core only runs turns through a `TurnRunner`.
export { planParked, planTurn } from './plan.js';
export { planClaimed, planToolTurn } from './plan-tools.js';
export type {
  ParkedPlan,
  ParkedTurns,
  RunDeps,
  RunInput,
  RunMode,
  RunOutcome,
  RunPlan,
  ToolParkedTurn,
  ToolRunDeps,
  TurnBase,
  TurnInterrupt,
} from './types.js';
export {
  clientTooSlow,
  createRunStop,
  stopReasonOf,
  toStopOutcome,
  type ProcessStop,
  type RunStop,
  type RunStopReason,
} from './stop.js';
