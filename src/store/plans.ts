import type { Database } from 'better-sqlite3';

/** The last plan report of one backend's login, as stored. */
export interface PlanRow {
  backend: string;
  status: string;
  window: string | null;
  /** epoch ms */
  resetsAt: number | null;
  utilization: number | null;
  overage: boolean;
  message: string | null;
  /** epoch ms */
  updatedAt: number;
}

interface Row {
  backend: string;
  status: string;
  plan_window: string | null;
  resets_at: number | null;
  utilization: number | null;
  overage: number;
  message: string | null;
  updated_at: number;
}

/** One row per backend: what the CLI last said of its login's plan window. */
export function createPlanStore(db: Database) {
  const upsert = db.prepare(
    `INSERT INTO plan_state (backend, status, plan_window, resets_at, utilization, overage, message, updated_at)
     VALUES (@backend, @status, @plan_window, @resets_at, @utilization, @overage, @message, @updated_at)
     ON CONFLICT (backend) DO UPDATE SET status = excluded.status, plan_window = excluded.plan_window,
       resets_at = excluded.resets_at, utilization = excluded.utilization, overage = excluded.overage,
       message = excluded.message, updated_at = excluded.updated_at`,
  );
  const all = db.prepare<[], Row>('SELECT * FROM plan_state');
  return {
    save(r: PlanRow): void {
      upsert.run({
        backend: r.backend,
        status: r.status,
        plan_window: r.window,
        resets_at: r.resetsAt,
        utilization: r.utilization,
        overage: r.overage ? 1 : 0,
        message: r.message,
        updated_at: r.updatedAt,
      });
    },
    list(): PlanRow[] {
      return all.all().map((r) => ({
        backend: r.backend,
        status: r.status,
        window: r.plan_window,
        resetsAt: r.resets_at,
        utilization: r.utilization,
        overage: r.overage === 1,
        message: r.message,
        updatedAt: r.updated_at,
      }));
    },
  };
}

export type PlanStore = ReturnType<typeof createPlanStore>;
