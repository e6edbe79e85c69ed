export { createLogins, type LoginAnswer, type Logins } from './logins.js';
export { createRefreshGate, type RefreshGate, type Turnstile } from './refresh.js';
export {
  checkClaudeApiKey,
  checkClaudeToken,
  loginPaths,
  removeLoginFiles,
  saveClaudeApiKey,
  saveClaudeToken,
  writeSecret,
} from './secrets.js';
export { checkLoginName, MACHINE_LOGIN } from '../store/index.js';
export { type CliVerdict, LoginFailed, toSaid, toStatusTimeoutText } from './said.js';
export { createLoginClis, createLoginCliContext, type LoginClis } from './clis.js';
export { INTERACTIVE_MS, type LoginCliContext } from './cli-run.js';
export { parseDevicePrompt, stripAnsi, toDeviceError, type DeviceView, type DeviceState } from './device.js';
export { createDeviceSignIns, type DeviceSignIns } from './device-sign-ins.js';
export {
  newLoginName,
  runConnectClaude,
  runConnectCodex,
  runRemoveCredential,
  runStartDevice,
  type ConnectDeps,
  type MemberCaller,
} from './connect.js';
export type { ClaudeSecret } from './claude-cli.js';

// A login is one person's CLI credentials (see ARCHITECTURE §13): a claude setup token, a codex
// CODEX_HOME of its own. Its row (which CLIs, what kind) is in the state database; its secrets are
// files under <state>/logins/<name>/ (0600 in 0700 directories), read when a run is started and
// handed to the run through its environment or its home only, never argv.

export { createSignInLimit, type SignInLimit } from './sign-in-limit.js';
