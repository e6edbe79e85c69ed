export {
  textsOf,
  toolResultText,
  type DocumentPart,
  type ImagePart,
  type Message,
  type OtherPart,
  type Part,
  type ReasoningPart,
  type Role,
  type TextPart,
  type ToolCallPart,
  type ToolResultPart,
} from './messages.js';
export { END_TURN, type StopReason } from './stop-reason.js';
export {
  EFFORTS,
  reasoningKey,
  toReasoningSetting,
  type Effort,
  type Reasoning,
  type ReasoningSetting,
} from './reasoning.js';
