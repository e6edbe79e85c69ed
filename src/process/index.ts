export { createProcessSupervisor, runCommand, type CommandResult, type ProcessSupervisor, type Invocation, type RunLimits, type ExitInfo, type EndReason, type RunningProcess, type CallMeta } from './spawn.js';
export { createLineSplitter } from './lines.js';
