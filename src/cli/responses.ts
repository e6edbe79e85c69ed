import type { Store } from '../store/index.js';
import { COMMON_OPTIONS } from './help.js';
import { UsageError } from './usage-error.js';
import { printable, toColumns } from './output.js';

export const RESPONSES_HELP = `Usage: olp responses COMMAND [options]

Responses stored by POST /v1/responses (store: true, the default): what previous_response_id,
GET /v1/responses/{id} and input_items read. Each belongs to the key that made it.

Commands:
  olp responses list [--limit N]               the newest stored responses: id, key, model, status, age, reply length
  olp responses prune --older-than DAYS        delete stored responses older than DAYS days

Options:
  --limit N            how many to list (default 50)
  --older-than DAYS    the age cut for prune
${COMMON_OPTIONS}
`;

export const RESPONSES_FLAGS = { limit: { type: 'string' }, 'older-than': { type: 'string' } } as const;

function positiveInt(value: string | boolean | undefined, flag: string, fallback?: number): number {
  if (value === undefined && fallback !== undefined) return fallback;
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${flag} needs a whole number of at least 1`);
  return n;
}

/** `olp responses …`: returns the exit code. */
export function runResponses(
  store: Store,
  sub: string | undefined,
  values: Record<string, string | boolean | undefined>,
  out: (s: string) => void,
): number {
  switch (sub) {
    case 'list': {
      const rows = store.responses.list(positiveInt(values.limit, '--limit', 50));
      if (rows.length === 0) {
        out('no stored responses\n');
        return 0;
      }
      const now = Date.now();
      const table = [['ID', 'KEY', 'MODEL', 'STATUS', 'AGE', 'REPLY CHARS', 'PREVIOUS']];
      for (const r of rows) {
        const age = Math.round((now - r.createdAt) / 60_000);
        table.push(
          [
            r.id,
            r.keyName ?? '(revoked)',
            r.model,
            r.status,
            age < 90 ? `${age}m` : `${(age / 60).toFixed(1)}h`,
            String(r.outputText.length),
            r.previousResponseId ?? '-',
          ].map(printable),
        );
      }
      out(toColumns(table));
      return 0;
    }
    case 'prune': {
      const days = positiveInt(values['older-than'], '--older-than');
      const n = store.responses.prune(Date.now() - days * 86400_000);
      out(`deleted ${n} stored response(s) older than ${days} day(s)\n`);
      return 0;
    }
    default:
      throw new UsageError(
        sub === undefined ? 'olp responses needs a command: list or prune' : `unknown responses command '${sub}'`,
      );
  }
}
