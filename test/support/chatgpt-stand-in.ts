// A small stand-in for the ChatGPT login's servers on loopback, so the real `codex` binary can run
// a ChatGPT login end to end with nothing leaving the machine: OpenAI's OAuth token endpoint
// (CODEX_REFRESH_TOKEN_URL_OVERRIDE) with rotating, single-use refresh tokens, and the ChatGPT
// backend (`chatgpt_base_url`), which answers 404 to whatever codex asks it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHttpServer } from '../../src/http/index.js';
import { listenLoopback } from './listen.js';

export interface Refresh {
  /** The refresh token the request spent. */
  refreshToken: string;
  /** `rotated`: it was the current one (new tokens were issued); `reused`: it had been spent. */
  outcome: 'rotated' | 'reused';
}

export interface ChatgptStandIn {
  url: string;
  /** Every refresh request, in order of arrival. */
  refreshes: Refresh[];
  /** The refresh token the next refresh must bring (`rt-1`, `rt-2`, …). */
  readonly current: string;
  close(): Promise<void>;
}

const ACCOUNT = { chatgpt_plan_type: 'plus', chatgpt_account_id: 'acct-standin', chatgpt_user_id: 'user-standin' };

/** An unsigned JWT (codex reads its claims without checking a signature). */
function jwt(claims: Record<string, unknown>): string {
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(claims)}.sig`;
}

/** The tokens of generation `gen`: its access and id tokens expire in `expiresInS`; its refresh token is `rt-<gen>`. */
function tokens(gen: number, expiresInS: number) {
  const exp = Math.floor(Date.now() / 1000) + expiresInS;
  const auth = { ...ACCOUNT, user_id: ACCOUNT.chatgpt_user_id };
  return {
    id_token: jwt({ email: 'standin@example.com', exp, 'https://api.openai.com/auth': auth }),
    access_token: jwt({ exp, gen, 'https://api.openai.com/auth': auth }),
    refresh_token: `rt-${gen}`,
  };
}

/**
 * A codex auth.json of a ChatGPT login, as `codex login` writes it, at token generation `gen`
 * (refresh token `rt-<gen>`), whose access token expires in `expiresInS` seconds.
 */
export function chatgptAuthJson(gen: number, expiresInS: number): string {
  return JSON.stringify(
    {
      auth_mode: 'chatgpt',
      OPENAI_API_KEY: null,
      tokens: { ...tokens(gen, expiresInS), account_id: ACCOUNT.chatgpt_account_id },
      last_refresh: new Date().toISOString(),
    },
    null,
    2,
  );
}

/** codex's settings for a stand-in's ChatGPT backend (its `-c` overrides). */
export function codexChatgptConfig(url: string): string[] {
  return [`chatgpt_base_url="${url}/backend-api/"`];
}

/** codex's environment for the stand-in's token endpoint. */
export function codexChatgptEnv(url: string): Record<string, string> {
  return { CODEX_REFRESH_TOKEN_URL_OVERRIDE: `${url}/oauth/token` };
}

/**
 * Starts the stand-in. Each refresh answers after `delayMs` (the real endpoint's time, in which
 * other CLIs may read the file still holding the old token); a refresh token works once: the
 * next use is answered 401 `refresh_token_reused`, as OpenAI's endpoint answers it.
 */
export async function startChatgptStandIn(o: { delayMs?: number; gen?: number } = {}): Promise<ChatgptStandIn> {
  let gen = o.gen ?? 1;
  const refreshes: Refresh[] = [];
  const server = createHttpServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = (req.url ?? '').split('?')[0]!;
    if (req.method !== 'POST' || path !== '/oauth/token') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not Found"}');
      return;
    }
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      body = Object.fromEntries(new URLSearchParams(raw));
    }
    const spent = String(body.refresh_token ?? '');
    // Decided on arrival: the token is spent by the first request that brings it.
    const rotated = spent === `rt-${gen}`;
    refreshes.push({ refreshToken: spent, outcome: rotated ? 'rotated' : 'reused' });
    if (rotated) gen++;
    const issued = gen;
    if (o.delayMs) await new Promise((r) => setTimeout(r, o.delayMs));
    if (rotated) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(tokens(issued, 3600)));
      return;
    }
    res.writeHead(401, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        error: {
          message:
            'Your refresh token has already been used to generate a new access token. Please try signing in again.',
          type: 'invalid_request_error',
          param: null,
          code: 'refresh_token_reused',
        },
      }),
    );
  });
  const { url, close } = await listenLoopback(server);
  return {
    url,
    refreshes,
    get current() {
      return `rt-${gen}`;
    },
    close,
  };
}
