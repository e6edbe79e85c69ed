import { z } from 'zod';
import { invalidRequest } from '../errors/index.js';
import { type ClaudeSecret, checkClaudeApiKey, checkClaudeToken } from '../logins/index.js';
import { firstIssue } from '../wire/index.js';

// The JSON bodies of /olp/me/login. Unknown fields are rejected, not stripped (a misspelt field
// would otherwise store nothing and still answer). Errors never repeat what was sent: it is a secret.

const claudeSchema = z.strictObject({
  token: z.string().max(4096).optional(),
  apiKey: z.string().max(4096).optional(),
  check: z.boolean().optional(),
});

const codexSchema = z.strictObject({
  apiKey: z.string().max(8192).optional(),
  accessToken: z.string().max(16384).optional(),
});

const deviceSchema = z.strictObject({});

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const r = schema.safeParse(body ?? {});
  if (r.success) return r.data;
  const unknown = r.error.issues.find((i) => i.code === 'unrecognized_keys');
  if (unknown) {
    const param = [...unknown.path.map(String), unknown.keys[0]!].join('.');
    throw invalidRequest(`Unrecognized request argument supplied: ${param}`, param);
  }
  const [message, param] = firstIssue(r.error);
  throw invalidRequest(message, param);
}

/** Exactly one of two fields: its name and value. */
function oneOf<A extends string, B extends string>(
  body: Partial<Record<A | B, string>>,
  a: A,
  b: B,
): { field: A | B; value: string } {
  const has = (k: A | B) => body[k] !== undefined;
  if (has(a) && has(b)) throw invalidRequest(`Give either '${a}' or '${b}', not both.`, b);
  if (!has(a) && !has(b)) throw invalidRequest(`Missing required parameter: '${a}' (or '${b}').`, a);
  const field = has(a) ? a : b;
  return { field, value: body[field]! };
}

/** A rule of the secret broken, said as a 400 naming its field. */
function checked(field: string, check: () => string): string {
  try {
    return check();
  } catch (err) {
    throw invalidRequest(`Invalid '${field}': ${(err as Error).message}.`, field);
  }
}

/** PUT /olp/me/login/claude: a setup token or an Anthropic API key, and whether to send one tiny request. */
export function parseClaudeLogin(body: unknown): { secret: ClaudeSecret; check: boolean } {
  const b = parse(claudeSchema, body);
  const { field, value } = oneOf(b, 'token', 'apiKey');
  const secret: ClaudeSecret =
    field === 'token'
      ? { token: checked(field, () => checkClaudeToken(value)) }
      : { apiKey: checked(field, () => checkClaudeApiKey(value)) };
  return { secret, check: b.check === true };
}

/** PUT /olp/me/login/codex: an OpenAI API key or an access token. */
export function parseCodexLogin(body: unknown): { kind: 'api-key' | 'access-token'; secret: string } {
  const { field, value } = oneOf(parse(codexSchema, body), 'apiKey', 'accessToken');
  const secret = checked(field, () => {
    const s = value.trim();
    if (s === '') throw new Error('it is empty');
    if (/\s/.test(s)) throw new Error('it has spaces or line breaks inside: paste it as one line');
    return s;
  });
  return { kind: field === 'apiKey' ? 'api-key' : 'access-token', secret };
}

/** POST /olp/me/login/codex/device: no body, or `{}`. */
export function parseDeviceStart(body: unknown): void {
  parse(deviceSchema, body);
}
