export type {
  Backend,
  BackendEvent,
  CliStatus,
  EventParser,
  ModelEntry,
  LoginUse,
  Turn,
  TurnOutcome,
  Usage,
  Place,
  Prepared,
  EnvPolicy,
  ForkSupport,
} from './types.js';
export { END_TURN, type StopReason } from '../core/index.js';
export { createBackends, type BackendSettings } from './registry.js';
export {
  createClaudeBackend,
  defaultClaudeCredentials,
  createClaudeParser,
  toClaudeUsage,
  toClaudeError,
  toStopReason,
  CLAUDE_LOGIN_FIX,
  DEFAULT_SYSTEM_PROMPT,
  type ClaudeOptions,
} from './claude/index.js';
export { findExecutable } from '../process/index.js';
export {
  resolveBin,
  withoutOwnBins,
  createDetector,
  type Detection,
  type Detector,
  type ProbeRoom,
  type StatusProbe,
} from './detect.js';
export {
  createCodexBackend,
  defaultCodexAuth,
  createCodexParser,
  toCodexUsage,
  CODEX_LOGIN_FIX,
  type CodexOptions,
} from './codex/index.js';
