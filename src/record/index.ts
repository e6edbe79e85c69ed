export { redact } from '../log/index.js';
export {
  parseRecording,
  promptHash,
  RecordingError,
  RECORDING_FORMAT,
  type Recording,
  type RecordedCall,
  type Row,
} from './format.js';
export {
  checkPrivateFile,
  createRecording,
  deleteRecording,
  listRecordings,
  loadRecording,
  managedPath,
  openAppender,
  recordingsDir,
  resolveRecording,
  type Appender,
} from './files.js';
export { createRecordingSupervisor, createReplaySupervisor } from './supervisors.js';
