import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../log/index.js';
import { answerMcp, type McpMessage } from './mcp.js';
import { type BridgeSession, createSession, type Session, toBridgeSession } from './session.js';
import type { ToolSpec } from './spec.js';

export type { BridgeSession, PendingCall, ToolUse } from './session.js';

/** The session a request names: by its bearer token on `/mcp`, or by `/mcp/<token>`. */
function sessionOf(sessions: ReadonlyMap<string, Session>, req: IncomingMessage): Session | undefined {
  const path = (req.url ?? '').split('?')[0]!;
  const token =
    path === '/mcp'
      ? /^Bearer ([A-Za-z0-9_-]{20,})$/.exec(req.headers.authorization ?? '')?.[1]
      : /^\/mcp\/([A-Za-z0-9_-]{20,})$/.exec(path)?.[1];
  return token ? sessions.get(token) : undefined;
}

/** A request's body, or undefined once a 413 is answered (over 4 MiB). */
async function readBody(req: IncomingMessage, res: ServerResponse): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > 4 * 1024 * 1024) {
      res.writeHead(413).end();
      return undefined;
    }
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks);
}

/** One HTTP request to the bridge: its session's JSON-RPC messages answered. */
async function handle(
  sessions: ReadonlyMap<string, Session>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const s = sessionOf(sessions, req);
  if (!s || s.closed) {
    res.writeHead(404).end();
    return;
  }
  if (req.method === 'DELETE') {
    res.writeHead(200).end();
    return;
  }
  if (req.method !== 'POST') {
    res.writeHead(405, { allow: 'POST, DELETE' }).end();
    return;
  }
  const raw = await readBody(req, res);
  if (!raw) return;
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    res
      .writeHead(400, { 'content-type': 'application/json' })
      .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
    return;
  }
  const messages = (Array.isArray(body) ? body : [body]) as McpMessage[];
  const answers = (await Promise.all(messages.map((m) => answerMcp(s, m)))).filter((a) => a !== undefined);
  if (answers.length === 0) {
    res.writeHead(202).end();
    return;
  }
  res
    .writeHead(200, { 'content-type': 'application/json' })
    .end(JSON.stringify(Array.isArray(body) ? answers : answers[0]));
}

/**
 * olp's own MCP server for the client's functions, one session per CLI run (streamable HTTP
 * transport, JSON responses, on its own loopback-only listener). The CLI lists the run's tools
 * and calls them; a call is held open until the client's next request brings its result (a
 * parked turn), or answered at once when the result came first. A session is reachable only
 * with its unguessable token, and only lists and answers its own run's functions: olp never
 * executes anything.
 */
export function createToolBridge(logger: Logger) {
  const sessions = new Map<string, Session>();
  let server: Server | undefined;
  let base = '';

  return {
    /** Starts the loopback listener (once). */
    async start(): Promise<void> {
      if (server) return;
      server = createServer((req, res) => {
        handle(sessions, req, res).catch((err: unknown) => {
          logger.warn({ event: 'tool_bridge_error', err }, 'tool bridge request failed');
          if (!res.headersSent) res.writeHead(500).end();
        });
      });
      // A parked call may wait many minutes for the client's results.
      server.requestTimeout = 0;
      server.headersTimeout = 60_000;
      await new Promise<void>((resolve, reject) => {
        server!.once('error', reject);
        server!.listen(0, '127.0.0.1', () => resolve());
      });
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      server.unref();
    },

    /** A session for one run's functions. */
    open(tools: readonly ToolSpec[]): BridgeSession {
      if (!server) throw new Error('the tool bridge is not started');
      const token = randomBytes(24).toString('base64url');
      const s = createSession(tools);
      sessions.set(token, s);
      return toBridgeSession(s, token, base, () => sessions.delete(token));
    },

    async close(): Promise<void> {
      for (const token of [...sessions.keys()]) sessions.delete(token);
      if (!server) return;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server!.close(() => resolve()));
      server = undefined;
    },
  };
}

export type ToolBridge = ReturnType<typeof createToolBridge>;
