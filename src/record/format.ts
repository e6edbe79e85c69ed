import { createHash } from 'node:crypto';

/** Version of the recording format (docs/recordings.md). */
export const RECORDING_FORMAT = 1;

export interface Header {
  type: 'header';
  format: number;
  olp_version: string;
  created: string;
}

export interface CallStart {
  type: 'call_start';
  index: number;
  backend: string;
  model: string;
  /** The command line, redacted. The prompt itself is never stored, only its hash. */
  invocation: { command: string; args: string[] };
  prompt_sha256: string;
}

export interface EventRow {
  type: 'event';
  index: number;
  offset_ms: number;
  line: string;
}

export interface CallEnd {
  type: 'call_end';
  index: number;
  exit_code: number | null;
  signal: string | null;
  duration_ms: number;
  /** The tail of stderr, redacted (the CLIs put some errors only there). */
  stderr: string;
}

export type Row = Header | CallStart | EventRow | CallEnd;

export interface RecordedCall {
  start: CallStart;
  events: EventRow[];
  end: CallEnd;
}

export interface Recording {
  header: Header;
  calls: RecordedCall[];
}

/** Hash of what a CLI was asked: its stdin and the files olp wrote for it (the system prompt). */
export function promptHash(prompt: string): string {
  return createHash('sha256').update(prompt, 'utf8').digest('hex');
}

/** A recording that is not well formed; the message names the line. */
export class RecordingError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(line > 0 ? `line ${line}: ${message}` : message);
    this.name = 'RecordingError';
  }
}

/**
 * Parses and validates a whole recording before anything is served: a header first, call
 * indexes contiguous from 0, every event inside its call, every call ended, nothing after a
 * call's end, no unknown row types.
 */
export function parseRecording(text: string): Recording {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  let header: Header | undefined;
  const open = new Map<number, RecordedCall>();
  const ended = new Set<number>();
  const calls: RecordedCall[] = [];
  let started = 0;
  lines.forEach((raw, i) => {
    const n = i + 1;
    let row: Row;
    try {
      row = JSON.parse(raw) as Row;
    } catch {
      throw new RecordingError('not valid JSON', n);
    }
    if (!row || typeof row !== 'object') throw new RecordingError('not a JSON object', n);
    if (n === 1 && row.type !== 'header') throw new RecordingError('the first row must be the header', n);
    switch (row.type) {
      case 'header':
        if (header) throw new RecordingError('a second header', n);
        if (row.format !== RECORDING_FORMAT)
          throw new RecordingError(
            `format ${String(row.format)} is not supported (this olp reads format ${RECORDING_FORMAT})`,
            n,
          );
        header = row;
        return;
      case 'call_start': {
        if (!Number.isInteger(row.index) || row.index !== started)
          throw new RecordingError(`call index ${String(row.index)} breaks the sequence (expected ${started})`, n);
        started++;
        if (typeof row.backend !== 'string' || typeof row.model !== 'string' || typeof row.prompt_sha256 !== 'string')
          throw new RecordingError('call_start needs backend, model and prompt_sha256', n);
        open.set(row.index, { start: row, events: [], end: undefined as unknown as CallEnd });
        return;
      }
      case 'event': {
        if (ended.has(row.index)) throw new RecordingError(`event for call ${row.index} after its call_end`, n);
        const call = open.get(row.index);
        if (!call) throw new RecordingError(`event for call ${String(row.index)}, which has not started`, n);
        if (typeof row.line !== 'string' || typeof row.offset_ms !== 'number')
          throw new RecordingError('event needs line and offset_ms', n);
        call.events.push(row);
        return;
      }
      case 'call_end': {
        if (ended.has(row.index)) throw new RecordingError(`call ${row.index} ended twice`, n);
        const call = open.get(row.index);
        if (!call) throw new RecordingError(`call_end for call ${String(row.index)}, which has not started`, n);
        call.end = row;
        open.delete(row.index);
        ended.add(row.index);
        calls[row.index] = call;
        return;
      }
      default:
        throw new RecordingError(`unknown row type '${String((row as { type?: unknown }).type)}'`, n);
    }
  });
  if (!header) throw new RecordingError('empty recording: no header', 0);
  if (open.size > 0) throw new RecordingError(`call ${[...open.keys()][0]} never ended`, lines.length);
  return { header, calls };
}
