export { parseChatRequest, type ChatRequest, type ChatMessage } from './chat-request.js';
export { toCoreMessages } from './chat-messages.js';
export { MAX_JSON_DEPTH } from './depth.js';
export { checkOutputTokens, OUTPUT_TOKENS_CEILING } from './output-tokens.js';
export { describeType, firstIssue } from './issues.js';
export {
  checkCallOutputs,
  parseResponsesRequest,
  qualifiedName,
  toChatTools,
  type ResponsesTools,
  type ToolWire,
  type InputItem,
  type ParsedResponsesRequest,
  type ResponsesRequest,
} from './responses-request.js';
export { callOfItem } from './stored-calls.js';
export { fromStoredMessages } from './stored-messages.js';
export { parseMessagesRequest, type MessagesRequest, type ParsedMessagesRequest } from './messages-request.js';
