// A stand-in for claude's OAuth endpoints on loopback. claude's token URL is hard-wired to
// https://platform.claude.com/v1/oauth/token (the environment is fixed to prod; the override takes
// an allow-list only), so it is reached the way claude reaches any host through a proxy: an
// HTTPS_PROXY on loopback that answers CONNECT itself, with TLS from a throwaway CA claude trusts
// through NODE_EXTRA_CA_CERTS. The Messages stand-in stays on loopback, outside the proxy (NO_PROXY).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { listenLoopback } from './listen.js';

/** One call to the token endpoint's refresh grant, as it arrived and as it was answered. */
export interface RefreshCall {
  refreshToken: string;
  result: 'ok' | 'invalid_grant';
  /** The access token it issued (when ok). */
  issued?: string;
  at: number;
}

export interface OAuthStandIn {
  /** claude's environment to reach the stand-in (proxy, CA) and the loopback hosts directly. */
  env: Record<string, string>;
  /** Every refresh-grant call, in the order they arrived. */
  refreshes: RefreshCall[];
  /** The Authorization headers of the profile calls (claude fetches it after a refresh). */
  profiles: string[];
  /** Hosts claude opened a tunnel to. */
  connects: string[];
  close(): Promise<void>;
}

/** Hosts the throwaway server certificate is good for (claude's OAuth and API hosts). */
const HOSTS = [
  'platform.claude.com',
  'api.anthropic.com',
  'claude.ai',
  '*.anthropic.com',
  '*.claude.com',
  '*.claude.ai',
];

/** Why the stand-in cannot run here (openssl missing), or undefined when it can. */
export function oauthStandInUnavailable(): string | undefined {
  const r = spawnSync('openssl', ['version'], { encoding: 'utf8' });
  return r.error || r.status !== 0 ? 'openssl is not installed: it makes the OAuth stand-in’s throwaway CA' : undefined;
}

/** A CA and a server certificate it signed for HOSTS, made with openssl in `dir`. */
function makeCertificates(dir: string): { ca: string; key: Buffer; cert: Buffer } {
  const openssl = (...args: string[]) => {
    const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
    if (r.error || r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${r.error?.message ?? r.stderr}`);
  };
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=olp test CA',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
  );
  writeFileSync(
    join(dir, 'server.ext'),
    `subjectAltName=${HOSTS.map((h) => `DNS:${h}`).join(',')}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`,
  );
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=platform.claude.com',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
  );
  openssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    'server.ext',
    '-out',
    'server.crt',
  );
  return {
    ca: join(dir, 'ca.crt'),
    key: readFileSync(join(dir, 'server.key')),
    cert: readFileSync(join(dir, 'server.crt')),
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

const ACCOUNT = { uuid: '00000000-0000-4000-8000-000000000001', email_address: 'owner@example.com' };
const ORGANIZATION = { uuid: '00000000-0000-4000-8000-000000000002' };

/**
 * Starts the proxy. Refresh tokens are single-use, as the provider's are (`rt-0` is the first;
 * the n-th refresh issues `at-n` and `rt-n` and retires the token it was given; a retired or
 * unknown one gets `invalid_grant`). Each refresh answers after `delayMs`, so runs that refresh
 * together overlap.
 */
export async function startOAuthStandIn(opts: { delayMs?: number; expiresInS?: number } = {}): Promise<OAuthStandIn> {
  const dir = mkdtempSync(join(tmpdir(), 'olp-oauth-'));
  let certs: ReturnType<typeof makeCertificates>;
  try {
    certs = makeCertificates(dir);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const refreshes: RefreshCall[] = [];
  const profiles: string[] = [];
  const connects: string[] = [];
  const tunnels = new Set<Duplex>();
  const valid = new Set(['rt-0']);
  let issued = 0;

  const tls = createHttpsServer({ key: certs.key, cert: certs.cert }, async (req, res) => {
    const raw = await readBody(req);
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'POST' && path === '/v1/oauth/token') {
      let grant: { grant_type?: string; refresh_token?: string } = {};
      try {
        grant = JSON.parse(raw) as typeof grant;
      } catch {
        grant = Object.fromEntries(new URLSearchParams(raw));
      }
      if (grant.grant_type !== 'refresh_token') return json(res, 400, { error: 'unsupported_grant_type' });
      const call: RefreshCall = { refreshToken: grant.refresh_token ?? '', result: 'ok', at: Date.now() };
      refreshes.push(call);
      await new Promise((r) => setTimeout(r, opts.delayMs ?? 600));
      if (!valid.delete(call.refreshToken)) {
        call.result = 'invalid_grant';
        return json(res, 400, { error: 'invalid_grant', error_description: 'Invalid refresh token' });
      }
      issued++;
      valid.add(`rt-${issued}`);
      call.issued = `at-${issued}`;
      return json(res, 200, {
        token_type: 'Bearer',
        access_token: call.issued,
        refresh_token: `rt-${issued}`,
        expires_in: opts.expiresInS ?? 3600,
        scope: 'user:inference user:profile user:sessions:claude_code user:mcp_servers user:file_upload',
        account: ACCOUNT,
        organization: ORGANIZATION,
      });
    }
    if (path === '/api/oauth/profile') {
      profiles.push(req.headers.authorization ?? '');
      return json(res, 200, {
        account: { uuid: ACCOUNT.uuid, email: ACCOUNT.email_address, display_name: 'Owner' },
        organization: {
          uuid: ORGANIZATION.uuid,
          organization_type: 'claude_max',
          rate_limit_tier: 'default_claude_max_5x',
          billing_type: 'stripe_subscription',
        },
      });
    }
    json(res, 404, {});
  });
  const proxy = createHttpServer((_req, res) => res.writeHead(502).end());
  proxy.on('connect', (req: IncomingMessage, socket, head: Buffer) => {
    connects.push(req.url ?? '');
    tunnels.add(socket);
    socket.on('close', () => tunnels.delete(socket));
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length) socket.unshift(head);
    tls.emit('connection', socket);
  });
  const { url, close } = await listenLoopback(proxy);
  return {
    env: { HTTPS_PROXY: url, NO_PROXY: '127.0.0.1,localhost', NODE_EXTRA_CA_CERTS: certs.ca },
    refreshes,
    profiles,
    connects,
    async close() {
      for (const s of tunnels) s.destroy();
      await close();
      tls.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
