export { parseChatRequest, type ChatRequest, type ChatMessage } from './chat-request.js';
export { parseResponsesRequest, toChatTools, type InputItem, type ParsedResponsesRequest, type ResponsesRequest } from './responses-request.js';
