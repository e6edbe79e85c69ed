import { describePlans } from '../plan/index.js';
import { parseWhen, type Store, type UsageFilter, type UsageGroup } from '../store/index.js';
import { COMMON_OPTIONS } from './help.js';
import { UsageError } from './usage-error.js';
import { printable, type Sink } from './output.js';

export const USAGE_HELP = `Usage: olp usage [export | prune] [options]

Commands:
  olp usage [--key NAME] [--since DATE] [--until DATE] [--by GROUP] [--json]
        who used how much of what, and how much of it was cache
  olp usage --from SOURCE [--from SOURCE …] [--key NAME] [--since DATE] [--until DATE] [--by GROUP] [--json]
        the same summary over several instances' ledgers, added up as one (a roll-up)
  olp usage export --format jsonl [--key NAME] [--since DATE] [--until DATE]
        every row in the documented schema (docs/usage-ledger.md), one JSON object a line
  olp usage prune --older-than DAYS
        delete rows older than DAYS days

Options:
  --key NAME           only the requests of keys of this name (one made again after a revoke too)
  --since DATE         from this time on: 2026-12-01 (UTC midnight), an ISO time, or back from now (7d, 12h)
  --until DATE         before this time (same forms)
  --by GROUP           how the summary is grouped: key (default), day, model, or login (whose CLI
                       login served it: machine for the machine's own, (no CLI) for refusals);
                       with --from also instance (its tag, else its URL or file)
  --json               the summary as JSON
  --from SOURCE        read this ledger (repeat for each): an instance's URL (http://host:8787, with
                       or without /v1), read with an owner key from OLP_OWNER_KEYS; a file that
                       olp usage export wrote (- for standard input); or local (this state dir).
                       With several, a key's row is NAME@TAG (or NAME@URL, NAME@FILE)
  --format jsonl       export format (the only one)
  --older-than DAYS    prune: rows older than this many days
${COMMON_OPTIONS}

Environment:
  OLP_OWNER_KEYS       for --from URL: owner keys, separated by spaces, one per instance; each
                       instance is read with the first that it takes as an owner's
`;

export const USAGE_FLAGS = {
  key: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  by: { type: 'string' },
  json: { type: 'boolean' },
  format: { type: 'string' },
  'older-than': { type: 'string' },
  from: { type: 'string', multiple: true },
} as const;

type Values = Record<string, string | boolean | undefined>;

/** A `--since`/`--until` value as ms since the epoch; a UsageError naming the flag otherwise. */
export function whenFlag(flag: string, raw: string, now = Date.now()): number {
  try {
    return parseWhen(raw, now);
  } catch (err) {
    throw new UsageError(`--${flag} ${(err as Error).message}`);
  }
}

function filterFrom(store: Store, values: Values): UsageFilter {
  const filter: UsageFilter = { scope: { all: true } };
  if (typeof values.key === 'string') {
    if (!store.keys.list().some((k) => k.name === values.key)) throw new UsageError(`no key named '${values.key}'`);
    filter.keyName = values.key;
  }
  if (typeof values.since === 'string') filter.sinceMs = whenFlag('since', values.since);
  if (typeof values.until === 'string') filter.untilMs = whenFlag('until', values.until);
  return filter;
}

const pct = (x: number | null) => (x === null ? '-' : `${(x * 100).toFixed(1)}%`);

/** `olp usage …` as the owner runs it on the machine: every key's rows. Returns the exit code. */
export async function runUsage(store: Store, sub: string | undefined, values: Values, sink: Sink): Promise<number> {
  const out = (s: string) => sink.write(s);
  if (sub === 'export') {
    if ((values.format ?? 'jsonl') !== 'jsonl') throw new UsageError(`--format must be jsonl`);
    // Paced by the reader: waits while the pipe is full, stops once it is closed (`| head -1`).
    for (const row of store.usage.export(filterFrom(store, values))) {
      if (!sink.write(`${JSON.stringify(row)}\n`) && !(await sink.drain())) break;
    }
    return 0;
  }
  if (sub === 'prune') {
    const days = typeof values['older-than'] === 'string' ? Number(values['older-than']) : NaN;
    if (!Number.isInteger(days) || days < 1)
      throw new UsageError('usage: olp usage prune --older-than DAYS (a whole number of days, at least 1)');
    out(`deleted ${store.usage.prune(Date.now() - days * 86400_000)} row(s) older than ${days} day(s)\n`);
    return 0;
  }
  if (sub !== undefined) throw new UsageError(`unknown usage command '${sub}' (export, prune)`);
  const by = (values.by ?? 'key') as string;
  if (by !== 'key' && by !== 'day' && by !== 'model' && by !== 'login')
    throw new UsageError(`--by must be key, day, model or login, not '${by}'`);
  const groups = store.usage.summarize(filterFrom(store, values), by);
  printUsage(by, groups, describePlans(store.plans.list(), Date.now()), { json: values.json === true, out });
  return 0;
}

/** The summary as `olp usage` prints it: a table (and the plans' limits), or `{ by, groups }` as JSON. */
export function printUsage(
  by: string,
  groups: UsageGroup[],
  plans: string[],
  opts: { json: boolean; out: (s: string) => void },
): void {
  const { out } = opts;
  if (opts.json) {
    out(`${JSON.stringify({ by, groups }, null, 2)}\n`);
    return;
  }
  const planLines =
    plans.length > 0
      ? `\nplan limits (as the CLIs last reported):\n${plans.map((l) => `  ${printable(l)}\n`).join('')}`
      : '';
  if (groups.length === 0) {
    out(`no usage recorded in that range\n${planLines}`);
    return;
  }
  const rows = [
    [by.toUpperCase(), 'REQUESTS', 'OK', 'ERRORS', 'PROMPT', 'CACHED', 'COMPLETION', 'CACHE HIT', 'COST USD'],
  ];
  for (const g of groups) {
    // The group is a key name, a day, a model id as the client sent it (refused ones too), or a source.
    rows.push([
      printable(g.group),
      String(g.requests),
      String(g.ok),
      String(g.errors),
      String(g.promptTokens),
      String(g.cachedTokens),
      String(g.completionTokens),
      pct(g.cacheHitShare),
      g.costUsd === null ? '-' : g.costUsd.toFixed(4),
    ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  out(
    rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')).join('\n') +
      '\n' +
      planLines,
  );
}
