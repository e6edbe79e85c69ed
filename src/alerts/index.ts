export { type Alerts, type AlertsOptions, createAlerts } from './alerts.js';
export { toAlertRequest, toTitle } from './bodies.js';
export { createAlertDelivery } from './deliver.js';
export { toBudgetAlerts } from './budget.js';
export { toPlanAlerts } from './plan.js';
export { reachedThresholds } from './thresholds.js';
export type { Alert, AlertFormat, AlertRequest, AlertSubject, PendingAlert } from './types.js';
