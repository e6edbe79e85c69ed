import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { ReadableStream } from 'node:stream/web';
import { createInterface } from 'node:readline';
import { askHealth } from '../front/index.js';
import { INSTANCE_TAG, tokenTag, type LedgerRecord, type Store } from '../store/index.js';
import { printable } from './output.js';

// Where `olp usage --from` reads ledgers: an instance over HTTP, an export file, or this machine's store.

/** A failure to read one source, said as a line naming it; the command exits 1. */
export class SourceError extends Error {}

/** The rows a roll-up asks every source for: the CLI's `--since/--until/--key`, already resolved. */
export interface Window {
  sinceMs?: number;
  untilMs?: number;
  key?: string;
}

export interface OpenedSource {
  /** How the source is named when no instance tag is known: its URL, file name or `local`. */
  name: string;
  /** The instance's tag (from its owner `/health`, or this machine's config), when known. */
  tag: string | null;
  /** false: the instance has no key of `--key`'s name (its rows are none, not an error). */
  hasKey: boolean;
  rows: AsyncIterable<LedgerRecord> | Iterable<LedgerRecord>;
  /** Lets go of what is still open (a response body, a file) when the roll-up stops early. */
  close(): void;
}

/** How long an instance gets to start answering. */
const ANSWER_MS = 15_000;

/** A request carrying an owner key: as a header, to this address only (a redirect would take it elsewhere). */
function withKey(key: string): RequestInit {
  return { headers: { authorization: `Bearer ${key}` }, redirect: 'error' };
}

/** An instance's base URL: without a trailing `/v1` (the API's base URL works too) or slash. */
export function toInstanceBase(raw: string): string {
  const u = new URL(raw);
  return `${u.origin}${u.pathname.replace(/\/+$/, '').replace(/\/v1$/, '')}`;
}

/** What an instance answered, for a person: status, code and message, any key-like text cut. */
async function answerOf(res: Response): Promise<{ text: string; param: unknown }> {
  const body = await res.text().catch(() => '');
  let said = body.slice(0, 200);
  let param: unknown;
  try {
    const e = (JSON.parse(body) as { error?: { code?: unknown; message?: unknown; param?: unknown } }).error;
    if (e) {
      said = `${String(e.code)}: ${String(e.message)}`;
      param = e.param;
    }
  } catch {
    // Not olp's envelope (a proxy's page, an older olp): the start of the body says what it was.
  }
  return { text: printable(`${res.status} ${said}`.replace(/olpk_[A-Za-z0-9_-]+/g, 'olpk_…').trim()), param };
}

/**
 * The instance tag its owner `/health` gives, asked as `olp front` asks (null from an olp without tags, or on
 * any failure).
 */
async function tagOf(base: string, key: string): Promise<string | null> {
  try {
    const tag = ((await askHealth(base, key))?.instance as { tag?: unknown } | undefined)?.tag;
    return typeof tag === 'string' && INSTANCE_TAG.test(tag) ? tag : null;
  } catch {
    return null;
  }
}

/** Export rows, one JSON object a line, from a stream; a line that is not one names its place. */
async function* rowsOf(input: Readable, name: string): AsyncGenerator<LedgerRecord> {
  let n = 0;
  try {
    for await (const line of createInterface({ input, crlfDelay: Infinity })) {
      n++;
      if (line.trim() === '') continue;
      let row: unknown;
      try {
        row = JSON.parse(line);
      } catch {
        throw new SourceError(`${name}: line ${n} is not JSON`);
      }
      if (!isLedgerRecord(row))
        throw new SourceError(`${name}: line ${n} is not a usage export row (olp usage export)`);
      yield row;
    }
  } catch (err) {
    // A connection cut or a file unreadable part-way: said as what happened to this source.
    if (err instanceof SourceError) throw err;
    throw new SourceError(`${name}: reading stopped after line ${n} (${(err as Error).message})`);
  } finally {
    input.destroy();
  }
}

/** Enough of the export schema for a summary: what it reads is there and of the right type. */
function isLedgerRecord(r: unknown): r is LedgerRecord {
  const x = r as Partial<LedgerRecord> | null;
  const u = x?.usage;
  return (
    typeof x === 'object' &&
    x !== null &&
    typeof x.time === 'string' &&
    typeof x.outcome === 'string' &&
    (x.cost_usd === null || typeof x.cost_usd === 'number') &&
    typeof u === 'object' &&
    u !== null &&
    [u.prompt_tokens, u.cached_tokens, u.completion_tokens].every((v) => typeof v === 'number')
  );
}

/** The owner keys of OLP_OWNER_KEYS, the ones that have opened an instance, and those instances' tags. */
export interface OwnerKeys {
  keys: readonly string[];
  used: Set<string>;
  tags: Set<string>;
}

/**
 * The keys to try on the next instance, in their order: not one that opened another instance, nor
 * one whose tag names an instance already read, so a key goes only where it may belong.
 */
function candidates(k: OwnerKeys): string[] {
  return k.keys.filter((key) => !k.used.has(key) && !k.tags.has(tokenTag(key) ?? ''));
}

/**
 * An instance's rows through `GET /olp/usage/export`, with the first owner key it takes as an
 * owner's (a member's is refused, another instance's is unknown or sent on: the next is tried).
 */
export async function openInstance(raw: string, k: OwnerKeys, w: Window): Promise<OpenedSource> {
  const base = toInstanceBase(raw);
  const query = new URLSearchParams();
  if (w.sinceMs !== undefined) query.set('since', new Date(w.sinceMs).toISOString());
  if (w.untilMs !== undefined) query.set('until', new Date(w.untilMs).toISOString());
  if (w.key !== undefined) query.set('key', w.key);
  let last = 'to none: every key in it opened an instance already read (is this one of them again?)';
  for (const key of candidates(k)) {
    let res: Response;
    // The rows may take long to read; only their start has to come in time.
    const answered = new AbortController();
    const timer = setTimeout(() => answered.abort(new Error(`no answer in ${ANSWER_MS / 1000} s`)), ANSWER_MS);
    try {
      res = await fetch(`${base}/olp/usage/export?${query}`, { ...withKey(key), signal: answered.signal });
    } catch (err) {
      if (answered.signal.aborted) throw new SourceError(`${base}: ${(answered.signal.reason as Error).message}`);
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new SourceError(`${base}: could not reach it (${cause?.code ?? cause?.message ?? (err as Error).message})`);
    } finally {
      clearTimeout(timer);
    }
    const opened = (rows: OpenedSource['rows'], hasKey: boolean, close = () => {}) =>
      tagOf(base, key).then((told): OpenedSource => {
        const tag = told ?? tokenTag(key);
        k.used.add(key);
        if (tag !== null) k.tags.add(tag);
        return { name: base, tag, hasKey, rows, close };
      });
    if (res.ok && res.body) {
      const body = Readable.fromWeb(res.body as ReadableStream<Uint8Array>);
      return opened(rowsOf(body, base), true, () => body.destroy());
    }
    const answer = await answerOf(res);
    // An owner's key got past the door; only the key asked for is not there.
    if (res.status === 400 && answer.param === 'key') return opened([], false);
    // 401: not a key of this instance; 403: a member's; 421: another instance's (tagged).
    if (![401, 403, 421].includes(res.status)) throw new SourceError(`${base} answered ${answer.text}`);
    last = answer.text;
  }
  throw new SourceError(`${base}: no key in OLP_OWNER_KEYS opens it as an owner's (it answered ${last})`);
}

/** A file `olp usage export` wrote (`-`: standard input), filtered here as an instance would. */
export async function openExportFile(path: string, w: Window, stdin: Readable): Promise<OpenedSource> {
  const name = path === '-' ? 'stdin' : path;
  let input: Readable = stdin;
  if (path !== '-') {
    try {
      input = (await open(path)).createReadStream();
    } catch (err) {
      throw new SourceError(
        `${printable(path)}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
      );
    }
  }
  async function* within(): AsyncGenerator<LedgerRecord> {
    for await (const row of rowsOf(input, printable(name))) {
      const t = Date.parse(row.time);
      if (w.sinceMs !== undefined && t < w.sinceMs) continue;
      if (w.untilMs !== undefined && t >= w.untilMs) continue;
      if (w.key !== undefined && row.key_name !== w.key) continue;
      yield row;
    }
  }
  return { name, tag: null, hasKey: true, rows: within(), close: () => input.destroy() };
}

/** This machine's own ledger, read as `olp usage export` reads it. */
export function openLocal(store: Store, tag: string | null, w: Window): OpenedSource {
  const known = w.key === undefined || store.keys.list().some((k) => k.name === w.key);
  const filter = {
    scope: { all: true as const },
    ...(w.key !== undefined ? { keyName: w.key } : {}),
    ...(w.sinceMs !== undefined ? { sinceMs: w.sinceMs } : {}),
    ...(w.untilMs !== undefined ? { untilMs: w.untilMs } : {}),
  };
  return { name: 'local', tag, hasKey: known, rows: known ? store.usage.export(filter) : [], close: () => {} };
}
