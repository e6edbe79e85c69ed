export type { Backend, BackendEvent, EventParser, FinishReason, ModelEntry, Turn, TurnOutcome, Usage, Place, Prepared, EnvPolicy } from './types.js';
export { createClaudeBackend, createClaudeParser, toClaudeUsage, toClaudeError, toFinishReason, CLAUDE_LOGIN_FIX, DEFAULT_SYSTEM_PROMPT, type ClaudeOptions } from './claude/index.js';
export { findExecutable, resolveBin, withoutOwnBins, createDetector, type Detection, type Detector, type StatusProbe } from './detect.js';
export { createCodexBackend, createCodexParser, toCodexUsage, CODEX_LOGIN_FIX, type CodexOptions } from './codex/index.js';
