// A stand-in for OpenAI's device-code sign-in on loopback, for the real `codex login --device-auth
// --experimental_issuer URL` (0.171). It answers the three calls codex makes: the user code, the
// token poll (403 while pending: codex polls again), and the code exchange at /oauth/token with
// unsigned JWTs (codex accepts them). `decide` settles the pending poll:
//   approve: the authorization code, then tokens; codex writes auth.json and exits 0
//   deny:    401 on the poll: `Error logging in: device auth failed with status 401 Unauthorized`, exit 1
//   expire:  410 on the poll (codex's own expiry takes its 15 minutes; a server-side expiry ends the
//            same way as a denial): `… device auth failed with status 410 Gone`, exit 1
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenLoopback } from './listen.js';

export type DeviceDecision = 'approve' | 'deny' | 'expire';

export interface CodexDeviceStandIn {
  /** The issuer to give codex (`--experimental_issuer`). */
  url: string;
  /** The user code it hands out. */
  code: string;
  /** Each request as `METHOD path`, in order. */
  calls: string[];
  /** Settles the sign-in: codex's next poll gets the answer. */
  decide(d: DeviceDecision): void;
  close(): Promise<void>;
}

const jwt = (claims: object) =>
  ['{"alg":"none","typ":"JWT"}', JSON.stringify(claims), 'sig']
    .map((p) => Buffer.from(p).toString('base64url'))
    .join('.');

function json(res: ServerResponse, status: number, body: object): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Starts the stand-in; `code` is the user code it hands out. */
export async function startCodexDeviceStandIn(code = 'ABCD-1234'): Promise<CodexDeviceStandIn> {
  let decision: DeviceDecision | undefined;
  const calls: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0] ?? '';
      calls.push(`${req.method} ${path}`);
      if (path.endsWith('/deviceauth/usercode'))
        return json(res, 200, { device_auth_id: 'dev-standin', user_code: code, interval: '0' });
      if (path.endsWith('/deviceauth/token')) {
        if (decision === 'approve')
          return json(res, 200, { authorization_code: 'ac-standin', code_challenge: 'cc', code_verifier: 'cv' });
        if (decision === 'deny') return json(res, 401, { error: 'access_denied' });
        if (decision === 'expire') return json(res, 410, { error: 'expired_token' });
        // Pending: codex polls again at once (interval 0); a short hold keeps the loop calm.
        return setTimeout(() => json(res, 403, { error: 'authorization_pending' }), 50);
      }
      if (path === '/oauth/token') {
        const exp = Math.floor(Date.now() / 1000) + 3600;
        const auth = { chatgpt_account_id: 'acc-standin', chatgpt_plan_type: 'plus' };
        return json(res, 200, {
          id_token: jwt({ email: 'member@example.com', exp, 'https://api.openai.com/auth': auth }),
          access_token: jwt({ exp }),
          refresh_token: 'rt-standin',
        });
      }
      json(res, 404, { error: 'not_found' });
    });
  });
  const { url, close } = await listenLoopback(server);
  return {
    url,
    code,
    calls,
    decide(d) {
      decision = d;
    },
    close,
  };
}
