/** How an alert is written for its receiver (`alertFormat`). */
export type AlertFormat = 'json' | 'ntfy' | 'slack' | 'discord';

/** Whose limit it is: a key (by name), or a CLI's login (null: the machine's own). */
export type AlertSubject = { key: string } | { login: string | null; cli: string };

/** One alert, as the `json` format sends it (the other formats send its message). */
export interface Alert {
  type: 'olp.alert';
  kind: 'budget' | 'plan';
  subject: AlertSubject;
  /** The percent crossed (100: the limit is reached). */
  threshold: number;
  /** Tokens for a budget; percent of the window for a plan (the CLIs report only a share). */
  used: number;
  limit: number;
  /** used / limit, rounded to 0.01. */
  share: number;
  period: {
    name: 'day' | 'month' | 'window';
    /** ISO; null for a plan window (the CLIs say only when it resets). */
    start: string | null;
    resets_at: string | null;
    /** The plan window's own name (`five_hour`, `seven_day`, …). */
    window?: string | null;
  };
  message: string;
  /** ISO time the threshold was found crossed. */
  at: string;
}

/** An alert with what makes it once-only: its id (without the period) and its period's end (epoch ms). */
export interface PendingAlert {
  id: string;
  periodEnd: number;
  alert: Alert;
}

/** The HTTP request one alert becomes. */
export interface AlertRequest {
  headers: Record<string, string>;
  body: string;
}
