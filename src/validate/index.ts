export { parseChatRequest, type ChatRequest, type ChatMessage } from './chat-request.js';
