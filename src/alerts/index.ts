export { type Alerts, type AlertsOptions, createAlerts } from './alerts.js';
export { toAlertRequest, toTitle } from './bodies.js';
export { createAlertDelivery } from './deliver.js';
export { reachedThresholds, toBudgetAlerts, toPlanAlerts } from './thresholds.js';
export type { Alert, AlertFormat, AlertRequest, AlertSubject, PendingAlert } from './types.js';
