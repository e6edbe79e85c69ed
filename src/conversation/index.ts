export { openConversation } from './open.js';
export { estimatePromptTokens } from './estimate.js';
export { createStopMatcher, type StopMatcher } from './stop-sequences.js';
export type {
  Conversation,
  ConversationDeps,
  ConversationEvent,
  ConversationInput,
  ConversationResult,
  Endpoint,
  FinishedRequest,
  Outcome,
  RequestKind,
  RequestMeta,
  SessionNote,
} from './types.js';
