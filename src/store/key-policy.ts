// What a key may do, as its record carries it, and the policy of a key made without limits.

/** What a key may do. `null` means "no limit" (or, for models, "every model"). */
export interface Policy {
  /** Model ids or glob patterns (`claude-*`); null = all. */
  models: string[] | null;
  /** Requests in flight (queued or running) at once. */
  concurrency: number | null;
  /** Requests per rolling minute. */
  rpm: number | null;
  /** prompt + completion tokens per UTC day. */
  dailyTokens: number | null;
  /** prompt + completion tokens per UTC calendar month. */
  monthlyTokens: number | null;
  enabled: boolean;
  /** ISO time after which the key stops working. */
  expiresAt: string | null;
  /** May draw on the plan's paid extra usage; null = the role's default (owners yes, members no). */
  overage: 'allow' | 'deny' | null;
}

export const DEFAULT_POLICY: Policy = {
  models: null,
  concurrency: null,
  rpm: null,
  dailyTokens: null,
  monthlyTokens: null,
  enabled: true,
  expiresAt: null,
  overage: null,
};
