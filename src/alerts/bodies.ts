import type { Alert, AlertFormat, AlertRequest } from './types.js';

/** An alert as the receiver's format wants it: headers and body of the POST. */
export function toAlertRequest(format: AlertFormat, alert: Alert): AlertRequest {
  switch (format) {
    case 'json':
      return { headers: { 'content-type': 'application/json' }, body: JSON.stringify(alert) };
    case 'slack':
      return { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: alert.message }) };
    case 'discord':
      return { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: alert.message }) };
    case 'ntfy':
      // ntfy's publish-as-headers form: the body is the message; headers must stay ASCII.
      return {
        headers: {
          'content-type': 'text/plain; charset=utf-8',
          title: ascii(toTitle(alert)),
          priority: alert.threshold >= 100 ? 'high' : 'default',
          tags: alert.threshold >= 100 ? 'rotating_light' : 'warning',
        },
        body: alert.message,
      };
    default:
      return assertNever(format);
  }
}

/** "olp: kid at 80 % of its daily budget", "olp: claude (login alice) spent its 5-hour window". */
export function toTitle(alert: Alert): string {
  const s = alert.subject;
  const who = 'key' in s ? `key ${s.key}` : s.login === null ? s.cli : `${s.cli} (login ${s.login})`;
  const what = alert.kind === 'budget' ? `${alert.period.name === 'day' ? 'daily' : 'monthly'} budget` : 'plan window';
  return alert.threshold >= 100
    ? `olp: ${who} reached its ${what}`
    : `olp: ${who} at ${alert.threshold} % of its ${what}`;
}

const ascii = (s: string) => s.replace(/[^\x20-\x7e]/g, '?');

function assertNever(x: never): never {
  throw new Error(`unknown alert format ${String(x)}`);
}
