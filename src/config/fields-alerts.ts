import { z } from 'zod';
import type { Field } from './field.js';

/** Percents of a limit, each 1–100, from a list setting (`80,100`), sorted and without repeats. */
const percents = (fallback: number[]) =>
  z
    .array(z.coerce.number().int('expected whole percents').min(1).max(100))
    .min(1)
    .default(fallback)
    .transform((l) => [...new Set(l)].sort((a, b) => a - b));

/** Where the owner hears of a key or a login nearing its limit (src/alerts). */
export const ALERT_FIELDS = {
  alertWebhook: {
    kind: 'string',
    schema: z
      .string()
      .url()
      .refine((u) => /^https?:\/\//i.test(u), 'expected an http(s) URL')
      .optional(),
    flag: 'alert-webhook',
    env: 'OLP_ALERT_WEBHOOK',
    description:
      'URL alerts are POSTed to when a key nears its token budget or a login its plan window (a secret for Slack ' +
      'and Discord: only its host is logged). None: no alerts.',
  },
  alertFormat: {
    kind: 'string',
    schema: z.enum(['json', 'ntfy', 'slack', 'discord']).default('json'),
    flag: 'alert-format',
    env: 'OLP_ALERT_FORMAT',
    description: "The alert's body: json, ntfy (plain text with Title, Priority and Tags headers), slack or discord.",
  },
  alertBudgetThresholds: {
    kind: 'list',
    schema: percents([80, 100]),
    flag: 'alert-budget-thresholds',
    env: 'OLP_ALERT_BUDGET_THRESHOLDS',
    description: "Percents of a key's daily or monthly token budget at which an alert is sent (each once a period).",
  },
  alertPlanThresholds: {
    kind: 'list',
    schema: percents([90, 100]),
    flag: 'alert-plan-thresholds',
    env: 'OLP_ALERT_PLAN_THRESHOLDS',
    description: "Percents of a login's plan window at which an alert is sent (100: spent; each once a window).",
  },
} satisfies Record<string, Field>;
