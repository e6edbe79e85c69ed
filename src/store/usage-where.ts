// Which ledger rows a query reads: a scope, a key, a time window.

/**
 * Whose rows a query may see: every key (an owner, the CLI) or one key (a member's own view).
 * Every read takes one, so no query can forget the restriction.
 */
export type Scope = { all: true } | { keyId: string };

export interface UsageFilter {
  scope: Scope;
  /** Narrow an all-keys scope to one key. */
  keyId?: string;
  /**
   * Narrow it to the rows of the keys of this name (one made again after a revoke included), as `--by key`
   * groups them.
   */
  keyName?: string;
  sinceMs?: number;
  untilMs?: number;
}

/**
 * The SQL clause and parameters that restrict a query to a filter's rows, and to the conditions in
 * `also` (they come last, so the parameters of their own follow the filter's).
 */
export function where(f: UsageFilter, ...also: string[]): { sql: string; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  if ('keyId' in f.scope) {
    clauses.push('key_id = ?');
    params.push(f.scope.keyId);
  } else if (f.keyId) {
    clauses.push('key_id = ?');
    params.push(f.keyId);
  }
  if (f.keyName !== undefined) {
    clauses.push('key_name = ?');
    params.push(f.keyName);
  }
  if (f.sinceMs !== undefined) {
    clauses.push('ts >= ?');
    params.push(f.sinceMs);
  }
  if (f.untilMs !== undefined) {
    clauses.push('ts < ?');
    params.push(f.untilMs);
  }
  clauses.push(...also);
  return { sql: clauses.length ? `WHERE ${clauses.join(' AND ')}` : '', params };
}
