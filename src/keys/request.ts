import { z } from 'zod';
import type { Policy, Role } from '../store/index.js';
import { firstIssue, invalidRequest } from '../errors/index.js';
import { isLimit, OVERAGES, ROLES, toExpiryTime, toModels } from './rules.js';

// The JSON bodies of the owner's key endpoints (`/olp/keys`). Unknown fields are rejected, not
// stripped: a misspelt policy field would otherwise change nothing and still answer 200.

const limit = z
  .number()
  .nullable()
  .refine((n) => n === null || isLimit(n), 'expected a whole number from 1 up, or null for no limit');

const policySchema = z.strictObject({
  models: z
    .array(z.string().max(200))
    .max(200)
    .nullable()
    .transform((m) => (m === null ? null : toModels(m))),
  concurrency: limit,
  rpm: limit,
  dailyTokens: limit,
  monthlyTokens: limit,
  enabled: z.boolean(),
  expiresAt: z
    .string()
    .nullable()
    .refine((s) => s === null || toExpiryTime(s) !== undefined, 'expected an ISO 8601 time, or null for never')
    .transform((s) => (s === null ? null : toExpiryTime(s)!)),
  overage: z.enum(OVERAGES).nullable(),
});

const changeFields = {
  role: z.enum(ROLES).optional(),
  login: z.string().max(64).nullable().optional(),
  policy: policySchema.partial().optional(),
};

const createSchema = z.strictObject({
  name: z.string().max(64),
  ...changeFields,
});

const updateSchema = z.strictObject(changeFields);

/** A key change as the body gives it; the login is still to be checked against the store. */
export interface KeyChangeRequest {
  role?: Role | undefined;
  login?: string | null | undefined;
  policy?: Partial<Policy> | undefined;
}

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const r = schema.safeParse(body, { reportInput: true });
  if (r.success) return r.data;
  const unknown = r.error.issues.find((i) => i.code === 'unrecognized_keys');
  if (unknown) {
    const param = [...unknown.path.map(String), unknown.keys[0]!].join('.');
    throw invalidRequest(`Unrecognized request argument supplied: ${param}`, param, 'invalid_request', r.error);
  }
  const [message, param] = firstIssue(r.error);
  throw invalidRequest(message, param, 'invalid_request', r.error);
}

/** POST /olp/keys: a name and what to set; throws `invalid_request` naming the field. */
export function parseKeyCreate(body: unknown): KeyChangeRequest & { name: string } {
  return parse(createSchema, body);
}

/** PATCH /olp/keys/:name: what to change, at least one field; throws `invalid_request` naming the field. */
export function parseKeyUpdate(body: unknown): KeyChangeRequest {
  const change = parse(updateSchema, body);
  if (change.role === undefined && change.login === undefined && Object.keys(change.policy ?? {}).length === 0)
    throw invalidRequest('Nothing to change: give role, login, or a field of policy.', null);
  return change;
}
