import type { Logger } from '../log/index.js';
import type { AlertStore, PlanRow } from '../store/index.js';
import { toAlertRequest } from './bodies.js';
import { createAlertDelivery, type DeliveryOptions } from './deliver.js';
import { hasBudget, toBudgetAlerts, type BudgetPolicy } from './budget.js';
import { toPlanAlerts } from './plan.js';
import type { AlertFormat, PendingAlert } from './types.js';

export interface AlertsOptions {
  webhook: string;
  format: AlertFormat;
  /** Percents, ascending. */
  budgetThresholds: readonly number[];
  planThresholds: readonly number[];
  store: {
    alerts: AlertStore;
    usage: { tokensSince(keyId: string, sinceMs: number): number };
  };
  logger: Logger;
  now?: () => number;
  /** Tests: shorter waits than a real webhook gets, or their own fetch. */
  delivery?: Omit<DeliveryOptions, 'url' | 'logger'>;
}

/**
 * Alerts to the owner's webhook when a key nears its token budget or a login its plan window:
 * each threshold once a period (taken in the store, so a restart or a second process does not
 * send it again), posted in the background.
 */
export function createAlerts(o: AlertsOptions) {
  const now = o.now ?? Date.now;
  const delivery = createAlertDelivery({ url: o.webhook, logger: o.logger, ...o.delivery });
  /** Alerts this process knows are taken, by id, with their period's end: no write to ask again. */
  const taken = new Map<string, number>();

  function offer(pending: readonly PendingAlert[], t: number): void {
    for (const p of pending) {
      if ((taken.get(p.id) ?? 0) > t) continue;
      let mine: boolean;
      try {
        mine = o.store.alerts.claim(p.id, p.periodEnd, t);
      } catch (err) {
        o.logger.warn({ event: 'alert_failed', err, kind: p.alert.kind }, 'could not record an alert as sent');
        continue;
      }
      taken.set(p.id, p.periodEnd);
      if (mine) delivery.send(p.alert, toAlertRequest(o.format, p.alert));
    }
  }

  return {
    /** After a key's ledger row is written: alerts for the budget thresholds its usage has reached. */
    afterUsage(key: { keyId: string; name: string; policy: BudgetPolicy }): void {
      if (!hasBudget(key.policy)) return;
      const t = now();
      offer(
        toBudgetAlerts({
          keyId: key.keyId,
          keyName: key.name,
          policy: key.policy,
          tokensSince: (id, since) => o.store.usage.tokensSince(id, since),
          thresholds: o.budgetThresholds,
          now: t,
        }),
        t,
      );
    },

    /** After a CLI's report of a login's plan window (`scope`: `claude`, `claude@alice`). */
    afterPlanReport(scope: string, row: PlanRow): void {
      const t = now();
      offer(toPlanAlerts(scope, row, o.planThresholds, t), t);
    },

    /** Stops sending (waits briefly for alerts under way). */
    close: () => delivery.close(),
  };
}

export type Alerts = ReturnType<typeof createAlerts>;
