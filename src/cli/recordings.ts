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
import { UsageError } from './keys.js';
import { printable } from './output.js';

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

/** `olp recordings …`: returns the exit code (0 ok, 1 failure, 2 usage or refused confirmation). */
export async function runRecordings(
  config: Config,
  version: string,
  sub: string | undefined,
  positionals: string[],
  values: Record<string, string | boolean | undefined>,
  out: (s: string) => void,
): Promise<number> {
  const one = () => {
    if (positionals.length !== 1) throw new UsageError(`usage: olp recordings ${sub} ID`);
    return positionals[0]!;
  };
  switch (sub) {
    case 'status': {
      out(
        `mode: ${config.recordMode}${config.recordFile ? `\nfile: ${resolveRecording(config.stateDir, config.recordFile).file}` : ''}\n(changes apply at the next start of olp serve)\n`,
      );
      return 0;
    }
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
    case 'list': {
      const all = listRecordings(config.stateDir);
      if (values.json) {
        out(`${JSON.stringify(all, null, 2)}\n`);
        return 0;
      }
      if (all.length === 0) {
        out('no recordings (start one with: olp recordings record)\n');
        return 0;
      }
      const rows = [
        ['ID', 'CALLS', 'BYTES', 'MODIFIED', 'VALID'],
        ...all.map((r) => [
          printable(r.id),
          r.calls === null ? '-' : String(r.calls),
          String(r.bytes),
          r.modified,
          r.valid ? 'yes' : 'NO',
        ]),
      ];
      const w = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
      out(
        rows
          .map((r) =>
            r
              .map((c, i) => c.padEnd(w[i]!))
              .join('  ')
              .trimEnd(),
          )
          .join('\n') + '\n',
      );
      return 0;
    }
    case 'show': {
      const rec = loadRecording(config.stateDir, one());
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
      if (values.json) {
        out(`${JSON.stringify({ file: rec.file, header: rec.header, calls }, null, 2)}\n`);
        return 0;
      }
      // A recording is a file anyone may hand over (a bug report): every string in it is printed escaped.
      out(
        `${printable(rec.file)}\nformat ${printable(String(rec.header.format))}, olp ${printable(String(rec.header.olp_version))}, created ${printable(String(rec.header.created))}, ${calls.length} call(s)\n`,
      );
      for (const c of calls) {
        out(
          `  #${c.index} ${printable(String(c.backend))} ${printable(String(c.model))} prompt ${printable(String(c.prompt_sha256).slice(0, 12))}… ${c.events} line(s), exit ${printable(String(c.exit_code ?? c.signal))}, ${printable(String(c.duration_ms))} ms\n`,
        );
        for (const l of c.lines ?? []) out(`      ${printable(l)}\n`);
      }
      return 0;
    }
    case 'delete': {
      const id = one();
      managedPath(config.stateDir, id);
      await confirm(`delete recording ${id}`, id, values.yes === true);
      deleteRecording(config.stateDir, id);
      out(`deleted ${id}\n`);
      return 0;
    }
    case 'prune': {
      const days = typeof values['older-than'] === 'string' ? Number(values['older-than']) : NaN;
      if (!Number.isInteger(days) || days < 1)
        throw new UsageError('usage: olp recordings prune --older-than DAYS [--dry-run] [--yes]');
      const cutoff = Date.now() - days * 86400_000;
      const old = listRecordings(config.stateDir).filter((r) => Date.parse(r.modified) < cutoff);
      if (values['dry-run'] || old.length === 0) {
        out(old.length === 0 ? 'nothing to prune\n' : `would delete: ${old.map((r) => r.id).join(', ')}\n`);
        return 0;
      }
      await confirm(
        `delete ${old.length} recording(s) older than ${days} day(s)`,
        String(old.length),
        values.yes === true,
      );
      for (const r of old) deleteRecording(config.stateDir, r.id);
      out(`deleted ${old.length} recording(s)\n`);
      return 0;
    }
    default:
      throw new UsageError(
        `unknown recordings command '${sub ?? ''}' (status, record, replay, off, list, show, delete, prune)`,
      );
  }
}
