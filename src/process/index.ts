export { runCommand, runInteractive } from './command.js';
export { startWatched, type WatchedEnd, type WatchedRun } from './watched.js';
export { createProcessSupervisor } from './spawn.js';
export { stopProcess, type ProcessStop } from './stop.js';
export type {
  CallMeta,
  CommandResult,
  EndReason,
  ExitInfo,
  Invocation,
  ProcessSupervisor,
  RunLimits,
  RunningProcess,
} from './run-types.js';
export { createLineSplitter, LineTooLongError, MAX_LINE_BYTES } from './lines.js';
export { createReaper, describeProcess, findByHome, killByHome, type Reaper } from './reaper.js';
export { closeInheritedFds } from './fds.js';
export { createTreeRemover, type TreeRemover } from './remove.js';
export { findExecutable, signalGroup, startChild, starterInfo, type Child, type StarterInfo } from './start.js';
export { memoryInfo, tuneHeap } from './heap.js';
export { memoryPressure, processMemoryBytes } from './memory-sample.js';
