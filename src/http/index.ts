export { createApp, type AppDeps } from './app.js';
export { createHttpServer } from './server.js';
export { createLifecycle, type Lifecycle } from './lifecycle.js';
export { expressMessages } from './direct.js';
export type { OpenConversation } from './conversation-route.js';
export type { MemberLoginsDeps } from './my-login.js';
