import type { Request, Response } from 'express';
import { invalidRequest, ownerOnly } from '../errors/index.js';
import { parseWhen, WHEN_FORMS, type LedgerRecord, type Store, type UsageFilter } from '../store/index.js';
import { ctx } from './context.js';

/** A query parameter given once as text, or undefined; a repeated or nested one is refused. */
function queryText(req: Request, name: string): string | undefined {
  const raw = req.query[name];
  if (raw === undefined || typeof raw === 'string') return raw;
  throw invalidRequest(`Invalid value for '${name}': expected one value, got ${JSON.stringify(raw)}.`, name);
}

/** `?since=&until=&key=`: the same forms as `olp usage export --since/--until/--key`. */
function filterOf(req: Request, store: Store, now: number): UsageFilter {
  const filter: UsageFilter = { scope: { all: true } };
  for (const name of ['since', 'until'] as const) {
    const raw = queryText(req, name);
    if (raw === undefined) continue;
    let ms: number;
    try {
      ms = parseWhen(raw, now);
    } catch {
      throw invalidRequest(`Invalid value for '${name}': expected ${WHEN_FORMS}, got ${JSON.stringify(raw)}.`, name);
    }
    if (name === 'since') filter.sinceMs = ms;
    else filter.untilMs = ms;
  }
  const name = queryText(req, 'key');
  if (name !== undefined) {
    if (!store.keys.list().some((k) => k.name === name))
      throw invalidRequest(`Invalid value for 'key': no key named ${JSON.stringify(name)}.`, 'key');
    filter.keyName = name;
  }
  return filter;
}

/** Resolves true once the response can take more, false once it has closed (the client went away). */
function drained(res: Response): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (more: boolean) => () => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(more);
    };
    const onDrain = done(true);
    const onClose = done(false);
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}

/** Writes rows as the ledger yields them, paced by the client; stops once it has gone. */
async function writeRows(res: Response, rows: Iterable<LedgerRecord>): Promise<void> {
  for (const row of rows) {
    if (res.destroyed) return;
    if (!res.write(`${JSON.stringify(row)}\n`) && !(await drained(res))) return;
  }
  res.end();
}

/**
 * GET /olp/usage/export?since=&until=&key= (owner keys only): the ledger's rows in the documented
 * export schema (docs/usage-ledger.md), one JSON object a line, as `olp usage export` writes them.
 */
export function createUsageExportRoute(store: Store) {
  return async (req: Request, res: Response): Promise<void> => {
    if (ctx(res).principal!.role !== 'owner') throw ownerOnly();
    const filter = filterOf(req, store, Date.now());
    res.status(200);
    res.setHeader('content-type', 'application/x-ndjson');
    res.setHeader('cache-control', 'no-store');
    await writeRows(res, store.usage.export(filter));
  };
}
