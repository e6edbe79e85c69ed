import type { Readable } from 'node:stream';
import { parseOwnerKeys } from '../front/index.js';
import { createUsageTally, usageGroupOf, type GroupBy, type Store } from '../store/index.js';
import { UsageError } from './usage-error.js';
import { printable, type Sink } from './output.js';
import {
  openExportFile,
  openInstance,
  openLocal,
  SourceError,
  type OpenedSource,
  toInstanceBase,
  type Window,
} from './usage-sources.js';
import { printUsage, whenFlag } from './usage.js';

// `olp usage --from SOURCE …`: one summary over several instances' ledgers, computed from their
// exported rows by the same rules as `olp usage` on one.

type Values = Record<string, string | boolean | string[] | undefined>;

export interface RollupIo {
  env: Readonly<Record<string, string | undefined>>;
  stdin: Readable;
  stdout: Sink;
  stderr: Sink;
  /** This machine's store and instance tag, for `--from local`; the caller closes the store. */
  local(): { store: Store; tag: string | null };
}

const BY = ['key', 'day', 'model', 'login', 'instance'] as const;
type RollupBy = (typeof BY)[number];

/** A `--from` value: an instance's URL, `local`, or a file (`-`: standard input). */
type Source = { kind: 'url'; raw: string } | { kind: 'local' } | { kind: 'file'; path: string };

function toSource(raw: string): Source {
  if (raw === 'local') return { kind: 'local' };
  if (/^https?:\/\//i.test(raw)) {
    const url = URL.canParse(raw) ? new URL(raw) : undefined;
    if (!url) throw new UsageError(`--from '${printable(raw)}' is not a URL`);
    if (url.username || url.password)
      throw new UsageError(
        `--from ${url.host}: a URL with a user or password in it (keys come only from OLP_OWNER_KEYS)`,
      );
    if (url.search || url.hash) throw new UsageError(`--from '${printable(raw)}': no query or fragment in it`);
    return { kind: 'url', raw };
  }
  if (raw === '') throw new UsageError('--from needs a URL, a file, - or local');
  return { kind: 'file', path: raw };
}

/** Each source's name in the summary: its tag, else its URL or file; one tag on two sources names neither. */
function labelsOf(opened: readonly OpenedSource[]): string[] {
  const tags = opened.map((s) => s.tag);
  return opened.map((s) => (s.tag !== null && tags.filter((t) => t === s.tag).length === 1 ? s.tag : s.name));
}

async function openAll(sources: readonly Source[], w: Window, io: RollupIo, opened: OpenedSource[]): Promise<void> {
  const keys = { keys: parseOwnerKeys(io.env.OLP_OWNER_KEYS), used: new Set<string>(), tags: new Set<string>() };
  if (sources.some((s) => s.kind === 'url') && keys.keys.length === 0)
    throw new UsageError(
      'reading an instance needs its owner key in OLP_OWNER_KEYS (space-separated, one per instance)',
    );
  for (const s of sources) {
    if (s.kind === 'url') opened.push(await openInstance(s.raw, keys, w));
    else if (s.kind === 'file') opened.push(await openExportFile(s.path, w, io.stdin));
    else {
      const { store, tag } = io.local();
      opened.push(openLocal(store, tag, w));
    }
  }
}

/** `olp usage --from SOURCE [--from SOURCE …] [--by GROUP] [--key NAME] [--since] [--until] [--json]`. */
export async function runRollup(sub: string | undefined, values: Values, io: RollupIo): Promise<number> {
  if (sub !== undefined) throw new UsageError(`--from goes with the summary only, not with 'usage ${sub}'`);
  const from = values.from as string[];
  const sources = from.map(toSource);
  // The same ledger twice would count every row twice: `http://h:8787` and `http://h:8787/v1` are one.
  const seen = sources.map((s) => (s.kind === 'url' ? toInstanceBase(s.raw) : s.kind === 'file' ? s.path : 'local'));
  const dup = seen.find((f, i) => seen.indexOf(f) !== i);
  if (dup !== undefined) throw new UsageError(`--from '${printable(dup)}' is given twice`);
  const by = (values.by ?? 'key') as RollupBy;
  if (!BY.includes(by)) throw new UsageError(`--by must be key, day, model, login or instance, not '${String(by)}'`);
  const w: Window = {
    ...(typeof values.since === 'string' ? { sinceMs: whenFlag('since', values.since) } : {}),
    ...(typeof values.until === 'string' ? { untilMs: whenFlag('until', values.until) } : {}),
    ...(typeof values.key === 'string' ? { key: values.key } : {}),
  };
  const opened: OpenedSource[] = [];
  try {
    await openAll(sources, w, io, opened);
    if (w.key !== undefined && opened.every((s) => !s.hasKey))
      throw new SourceError(`no key named '${printable(w.key)}' on any of the instances`);
    const labels = labelsOf(opened);
    const tally = createUsageTally();
    for (const [i, s] of opened.entries()) {
      for await (const row of s.rows) tally.add(groupOf(row, by, labels[i]!, opened.length > 1), row);
    }
    printUsage(by, tally.groups(), [], { json: values.json === true, out: (t) => io.stdout.write(t) });
    return 0;
  } catch (err) {
    if (!(err instanceof SourceError)) throw err;
    io.stderr.write(`olp: ${err.message}\n`);
    return 1;
  } finally {
    for (const s of opened) s.close();
  }
}

/** A row's group in the roll-up: a key as `name@source` when there are several sources, so none merge. */
function groupOf(row: Parameters<typeof usageGroupOf>[0], by: RollupBy, label: string, several: boolean): string {
  if (by === 'instance') return label;
  const group = usageGroupOf(row, by as GroupBy);
  return by === 'key' && several ? `${group}@${label}` : group;
}
