// A key as stored and as the rest of olp sees it: its record, and the row it is read from.
import type { Policy } from './key-policy.js';

export type Role = 'owner' | 'member';

export interface KeyRecord {
  id: string;
  name: string;
  role: Role;
  /** The first characters of the token, safe to show (`olpk_AbC…`). */
  hint: string;
  createdAt: string;
  revokedAt: string | null;
  policy: Policy;
  /** The login whose CLIs serve this key (src/logins); null: the machine's own. */
  login: string | null;
}

/** The columns of a keys row. */
export interface KeyRow {
  id: string;
  name: string;
  role: Role;
  token_hash: Buffer;
  hint: string;
  created_at: string;
  revoked_at: string | null;
  models: string | null;
  concurrency: number | null;
  rpm: number | null;
  daily_tokens: number | null;
  monthly_tokens: number | null;
  enabled: number;
  expires_at: string | null;
  overage: string | null;
  login: string | null;
}

export function toRecord(row: KeyRow): KeyRecord {
  return {
    id: row.id,
    name: row.name,
    role: row.role,
    hint: row.hint,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    policy: {
      models: row.models === null ? null : (JSON.parse(row.models) as string[]),
      concurrency: row.concurrency,
      rpm: row.rpm,
      dailyTokens: row.daily_tokens,
      monthlyTokens: row.monthly_tokens,
      enabled: row.enabled === 1,
      expiresAt: row.expires_at,
      overage: row.overage === 'allow' || row.overage === 'deny' ? row.overage : null,
    },
    login: row.login,
  };
}
