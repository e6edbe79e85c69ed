export { runTurn } from './turn.js';
export { planParked, planTurn } from './plan.js';
export { planClaimed, planToolTurn } from './plan-tools.js';
export { runParked } from './parked.js';
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
