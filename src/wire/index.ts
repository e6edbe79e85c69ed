export { parseChatRequest, type ChatRequest, type ChatMessage } from './chat/request.js';
export { toCoreMessages } from './chat/messages.js';
export { parseChatTools, type ChatTools } from './chat/tools.js';
export { MAX_JSON_DEPTH } from './depth.js';
export { checkOutputTokens, OUTPUT_TOKENS_CEILING } from './output-tokens.js';
export { describeType, firstIssue } from '../errors/index.js';
export {
  checkCallOutputs,
  parseResponsesRequest,
  qualifiedName,
  toToolOffer,
  type ResponsesTools,
  type ToolWire,
  type InputItem,
  type ParsedResponsesRequest,
  type ResponsesRequest,
} from './responses/request.js';
export { callOfItem } from './responses/stored-calls.js';
export { fromStoredMessages } from './responses/stored-messages.js';
export { parseMessagesRequest, type MessagesRequest, type ParsedMessagesRequest } from './messages/request.js';
export * from './chat/shapes.js';
export * from './chat/stop-reason.js';
export * from './messages/stop-reason.js';
export * from './responses/stop-reason.js';
export { createSseWriter, ClientTooSlowError, endSlowStream, type SseWriter } from './sse.js';
export * from './chat/events.js';
export { collectReply, setHeaders, type Events } from './reply.js';
export * from './chat/write.js';
export * from './responses/write.js';
export * from './messages/write.js';
export type { WireAdapter, WireDeps } from './adapter.js';
export { chatAdapter, toChatReasoning } from './chat/adapter.js';
export { toMessagesReasoning } from './messages/reasoning.js';
export { mapModel, messagesAdapter, toMessagesInput, type MessagesWireDeps } from './messages/adapter.js';
export {
  MAX_ITEM_REFERENCES,
  responsesAdapter,
  toResponsesReasoning,
  type ResponsesWireDeps,
} from './responses/adapter.js';
