import { createInterface } from 'node:readline/promises';
import { updateConfigFile, type Config } from '../config/index.js';
import {
  createRecording,
  deleteRecording,
  listRecordings,
  loadRecording,
  managedPath,
  resolveRecording,
} from '../record/index.js';
import { COMMON_OPTIONS } from './help.js';
import { UsageError } from './usage-error.js';
import { printable, toColumns } from './output.js';

export const RECORDINGS_HELP = `Usage: olp recordings COMMAND [options]

A recording holds every CLI call olp serve made (prompt hash, output lines, exit); replaying one
answers from it without running any CLI. record, replay and off apply at the next start of olp serve.

Commands:
  olp recordings status                  the current mode and file
  olp recordings record [--name ID]      record from the next start
  olp recordings replay ID-OR-PATH       replay from the next start
  olp recordings off                     neither, from the next start
  olp recordings list [--json]           the recordings in the state dir
  olp recordings show ID [--content] [--json]
                                         a recording's calls (--content: their output lines)
  olp recordings delete ID [--yes]       delete one
  olp recordings prune --older-than DAYS [--dry-run] [--yes]
                                         delete those not changed for DAYS days

Options:
  --name ID            the new recording's id (default rec-<date>-<time>)
  --json               as JSON
  --content            include each call's output lines
  --yes                do not ask before deleting (needed without a terminal)
  --dry-run            only say what prune would delete
  --older-than DAYS    prune: age in days
${COMMON_OPTIONS}
`;

export const RECORDING_FLAGS = {
  name: { type: 'string' },
  json: { type: 'boolean' },
  content: { type: 'boolean' },
  yes: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  'older-than': { type: 'string' },
} as const;

/** Thrown when a destructive command was not confirmed: exit code 2. */
export class NotConfirmed extends Error {}

async function confirm(what: string, expected: string, yes: boolean): Promise<void> {
  if (yes) return;
  if (!process.stdin.isTTY) throw new NotConfirmed(`${what}: pass --yes to confirm (no terminal to ask on)`);
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`${what}. Type ${expected} to confirm: `);
    if (answer.trim() !== expected) throw new NotConfirmed('not confirmed; nothing was deleted');
  } finally {
    rl.close();
  }
}

function stamp(): string {
  return new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
}

type Values = Record<string, string | boolean | undefined>;

/** `olp recordings status`. */
function statusText(config: Config): string {
  const file = config.recordFile ? `\nfile: ${resolveRecording(config.stateDir, config.recordFile).file}` : '';
  return `mode: ${config.recordMode}${file}\n(changes apply at the next start of olp serve)\n`;
}

/** `olp recordings list`: a table, or JSON. */
function listText(config: Config, json: boolean): string {
  const all = listRecordings(config.stateDir);
  if (json) return `${JSON.stringify(all, null, 2)}\n`;
  if (all.length === 0) return 'no recordings (start one with: olp recordings record)\n';
  return toColumns([
    ['ID', 'CALLS', 'BYTES', 'MODIFIED', 'VALID'],
    ...all.map((r) => [
      printable(r.id),
      r.calls === null ? '-' : String(r.calls),
      String(r.bytes),
      r.modified,
      r.valid ? 'yes' : 'NO',
    ]),
  ]);
}

/** `olp recordings show ID`: the header and one line per call (with `--content`, its output lines), or JSON. */
function showText(config: Config, id: string, values: Values): string {
  const rec = loadRecording(config.stateDir, id);
  const calls = rec.calls.map((c) => ({
    index: c.start.index,
    backend: c.start.backend,
    model: c.start.model,
    prompt_sha256: c.start.prompt_sha256,
    events: c.events.length,
    exit_code: c.end.exit_code,
    signal: c.end.signal,
    duration_ms: c.end.duration_ms,
    ...(values.content ? { lines: c.events.map((e) => e.line) } : {}),
  }));
  if (values.json) return `${JSON.stringify({ file: rec.file, header: rec.header, calls }, null, 2)}\n`;
  // A recording is a file anyone may hand over (a bug report): every string in it is printed escaped.
  const p = (v: unknown) => printable(String(v));
  const { header } = rec;
  let text =
    `${printable(rec.file)}\n` +
    `format ${p(header.format)}, olp ${p(header.olp_version)}, created ${p(header.created)}, ${calls.length} call(s)\n`;
  for (const c of calls) {
    const prompt = printable(String(c.prompt_sha256).slice(0, 12));
    text +=
      `  #${c.index} ${p(c.backend)} ${p(c.model)} prompt ${prompt}… ${c.events} line(s), ` +
      `exit ${p(c.exit_code ?? c.signal)}, ${p(c.duration_ms)} ms\n`;
    for (const l of c.lines ?? []) text += `      ${printable(l)}\n`;
  }
  return text;
}

/** `olp recordings prune --older-than DAYS [--dry-run] [--yes]`. */
async function prune(config: Config, values: Values, out: (s: string) => void): Promise<void> {
  const days = typeof values['older-than'] === 'string' ? Number(values['older-than']) : NaN;
  if (!Number.isInteger(days) || days < 1)
    throw new UsageError('usage: olp recordings prune --older-than DAYS [--dry-run] [--yes]');
  const cutoff = Date.now() - days * 86400_000;
  const old = listRecordings(config.stateDir).filter((r) => Date.parse(r.modified) < cutoff);
  if (values['dry-run'] || old.length === 0) {
    out(old.length === 0 ? 'nothing to prune\n' : `would delete: ${old.map((r) => r.id).join(', ')}\n`);
    return;
  }
  await confirm(`delete ${old.length} recording(s) older than ${days} day(s)`, String(old.length), values.yes === true);
  for (const r of old) deleteRecording(config.stateDir, r.id);
  out(`deleted ${old.length} recording(s)\n`);
}

/** `olp recordings …`: returns the exit code (0 ok, 1 failure, 2 usage or refused confirmation). */
export async function runRecordings(
  config: Config,
  version: string,
  sub: string | undefined,
  positionals: string[],
  values: Values,
  out: (s: string) => void,
): Promise<number> {
  const one = () => {
    if (positionals.length !== 1) throw new UsageError(`usage: olp recordings ${sub} ID`);
    return positionals[0]!;
  };
  switch (sub) {
    case 'status':
      out(statusText(config));
      return 0;
    case 'record': {
      const id = typeof values.name === 'string' ? values.name : `rec-${stamp()}`;
      const file = createRecording(config.stateDir, id, version);
      updateConfigFile(config.stateDir, { recordMode: 'record', recordFile: id });
      out(`recording to ${file}\nrestart olp serve to start recording\n`);
      return 0;
    }
    case 'replay': {
      const target = one();
      const rec = loadRecording(config.stateDir, target);
      updateConfigFile(config.stateDir, { recordMode: 'replay', recordFile: target.includes('/') ? rec.file : target });
      out(`replaying ${rec.calls.length} call(s) from ${rec.file}\nrestart olp serve to start replaying\n`);
      return 0;
    }
    case 'off':
      updateConfigFile(config.stateDir, { recordMode: 'off', recordFile: undefined });
      out('recording and replay off (from the next start)\n');
      return 0;
    case 'list':
      out(listText(config, values.json === true));
      return 0;
    case 'show':
      out(showText(config, one(), values));
      return 0;
    case 'delete': {
      const id = one();
      managedPath(config.stateDir, id);
      await confirm(`delete recording ${id}`, id, values.yes === true);
      deleteRecording(config.stateDir, id);
      out(`deleted ${id}\n`);
      return 0;
    }
    case 'prune':
      await prune(config, values, out);
      return 0;
    default:
      throw new UsageError(
        `unknown recordings command '${sub ?? ''}' (status, record, replay, off, list, show, delete, prune)`,
      );
  }
}
