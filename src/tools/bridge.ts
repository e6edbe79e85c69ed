import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../log/index.js';
import type { ToolSpec } from './index.js';

/**
 * olp's own MCP server for the client's functions, one session per CLI run (streamable HTTP
 * transport, JSON responses, on its own loopback-only listener). The CLI lists the run's tools
 * and calls them; a call is held open until the client's next request brings its result (a
 * parked turn), or answered at once when the result came first. A session is reachable only
 * with its unguessable token, and only lists and answers its own run's functions: olp never
 * executes anything.
 */

/** A call the model made: its tool_use id, the function and its arguments. */
export interface ToolUse {
  id: string;
  name: string;
  arguments: string;
}

export interface PendingCall {
  toolUseId: string;
  name: string;
}

export interface BridgeSession {
  readonly token: string;
  /** The MCP endpoint for the CLI's --mcp-config, the token in its path. */
  readonly url: string;
  /** The same endpoint without the token, for a CLI that sends it as a bearer token instead. */
  readonly endpoint: string;
  /**
   * The model's tool calls of the step just ended, in order (matched against the CLI's MCP calls).
   * `exact`: match them on their arguments only (calls reported one by one, codex), never on the
   * name alone, which could give one call another's result.
   */
  expect(uses: readonly ToolUse[], opts?: { exact?: boolean }): void;
  /** The client's results by tool_use id; calls already waiting are answered at once, the rest when asked. */
  provide(results: ReadonlyMap<string, string>): void;
  /** Tool calls the CLI has asked for and not had answered. */
  readonly waiting: readonly PendingCall[];
  /** How many of the expected calls the CLI has not asked for yet. */
  readonly unasked: number;
  /** Ends the session: waiting calls get an error result, and later calls are refused. */
  close(): void;
}

interface Waiting {
  toolUseId: string;
  name: string;
  answer(text: string, isError?: boolean): void;
}

/** A call that came before the model's call it answers was known (codex calls as it reports). */
interface Early {
  name: string;
  args: unknown;
  meta: Record<string, unknown> | undefined;
  answer(text: string, isError?: boolean): void;
}

interface Session {
  tools: readonly ToolSpec[];
  uses: ToolUse[];
  /** tool_use ids the CLI has already called. */
  called: Set<string>;
  results: Map<string, string>;
  waiting: Waiting[];
  early: Early[];
  /** Uses matched on their arguments only. */
  exact: Set<string>;
  closed: boolean;
}

const PROTOCOL = '2025-06-18';

export function createToolBridge(logger: Logger) {
  const sessions = new Map<string, Session>();
  let server: Server | undefined;
  let base = '';

  /** The tool_use a CLI's MCP call answers: by the id it carries, else by name and arguments in order. */
  function match(s: Session, name: string, args: unknown, meta: Record<string, unknown> | undefined): string | undefined {
    const byMeta = meta?.['claudecode/toolUseId'];
    if (typeof byMeta === 'string' && s.uses.some((u) => u.id === byMeta)) return byMeta;
    const open = s.uses.filter((u) => !s.called.has(u.id) && u.name === name);
    const same = open.find((u) => sameJson(u.arguments, args));
    return (same ?? open.find((u) => !s.exact.has(u.id)))?.id;
  }

  /** A call matched to the model's tool_use: answered now when its result is in, else held. */
  function take(s: Session, id: string, name: string, answer: Waiting['answer']): void {
    s.called.add(id);
    const ready = s.results.get(id);
    if (ready !== undefined) answer(ready);
    else s.waiting.push({ toolUseId: id, name, answer });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '').split('?')[0]!;
    const token = path === '/mcp' ? /^Bearer ([A-Za-z0-9_-]{20,})$/.exec(req.headers.authorization ?? '')?.[1] : /^\/mcp\/([A-Za-z0-9_-]{20,})$/.exec(path)?.[1];
    const s = token ? sessions.get(token) : undefined;
    if (!s || s.closed) {
      res.writeHead(404).end();
      return;
    }
    if (req.method === 'GET') {
      res.writeHead(405, { allow: 'POST, DELETE' }).end();
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
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > 4 * 1024 * 1024) {
        res.writeHead(413).end();
        return;
      }
      chunks.push(c as Buffer);
    }
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
      return;
    }
    const messages = (Array.isArray(body) ? body : [body]) as { id?: string | number; method?: string; params?: Record<string, unknown> }[];
    const answers = (await Promise.all(messages.map((m) => answer(s, m)))).filter((a) => a !== undefined);
    if (answers.length === 0) {
      res.writeHead(202).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(Array.isArray(body) ? answers : answers[0]));
  }

  async function answer(s: Session, m: { id?: string | number; method?: string; params?: Record<string, unknown> }): Promise<unknown> {
    if (m.id === undefined) return undefined; // a notification
    const ok = (result: unknown) => ({ jsonrpc: '2.0', id: m.id, result });
    switch (m.method) {
      case 'initialize':
        return ok({ protocolVersion: typeof m.params?.protocolVersion === 'string' ? m.params.protocolVersion : PROTOCOL, capabilities: { tools: { listChanged: false } }, serverInfo: { name: 'olp', version: '1' } });
      case 'ping':
        return ok({});
      case 'tools/list':
        // Read-only: nothing the client's function does is the CLI's to approve (codex asks otherwise).
        return ok({ tools: s.tools.map((t) => ({ name: t.name, ...(t.description ? { description: t.description } : {}), inputSchema: t.parameters, annotations: { readOnlyHint: true } })) });
      case 'tools/call': {
        const name = String(m.params?.name ?? '');
        if (!s.tools.some((t) => t.name === name)) return ok({ content: [{ type: 'text', text: `No tool named ${name} was offered.` }], isError: true });
        const args = m.params?.arguments ?? {};
        const meta = m.params?._meta as Record<string, unknown> | undefined;
        const text = await new Promise<{ text: string; isError: boolean }>((resolve) => {
          const answer = (t: string, isError = false) => resolve({ text: t, isError });
          const id = match(s, name, args, meta);
          if (id) take(s, id, name, answer);
          // Not known yet: it is matched when the CLI's report of the call is read (expect).
          else s.early.push({ name, args, meta, answer });
        });
        return ok({ content: [{ type: 'text', text: text.text }], ...(text.isError ? { isError: true } : {}) });
      }
      default:
        return { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } };
    }
  }

  return {
    /** Starts the loopback listener (once). */
    async start(): Promise<void> {
      if (server) return;
      server = createServer((req, res) => {
        handle(req, res).catch((err: unknown) => {
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
      const s: Session = { tools, uses: [], called: new Set(), results: new Map(), waiting: [], early: [], exact: new Set(), closed: false };
      sessions.set(token, s);
      return {
        token,
        url: `${base}/mcp/${token}`,
        endpoint: `${base}/mcp`,
        expect(uses, opts) {
          s.uses.push(...uses);
          if (opts?.exact) for (const u of uses) s.exact.add(u.id);
          for (const e of [...s.early]) {
            const id = match(s, e.name, e.args, e.meta);
            if (!id) continue;
            s.early.splice(s.early.indexOf(e), 1);
            take(s, id, e.name, e.answer);
          }
        },
        provide(results) {
          for (const [id, text] of results) s.results.set(id, text);
          // The turn goes on: calls of the last step the CLI never made are over.
          s.uses = s.uses.filter((u) => s.called.has(u.id) || results.has(u.id));
          for (const w of [...s.waiting]) {
            const text = s.results.get(w.toolUseId);
            if (text === undefined) continue;
            s.waiting.splice(s.waiting.indexOf(w), 1);
            w.answer(text);
          }
        },
        get waiting() {
          return s.waiting.map((w) => ({ toolUseId: w.toolUseId, name: w.name }));
        },
        get unasked() {
          return s.uses.filter((u) => !s.called.has(u.id)).length;
        },
        close() {
          s.closed = true;
          sessions.delete(token);
          for (const w of s.waiting.splice(0)) w.answer('The client did not return a result for this call.', true);
          for (const e of s.early.splice(0)) e.answer('This call does not match a tool call of the model.', true);
        },
      };
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

/** Whether a JSON text and a value hold the same data (key order aside). */
function sameJson(text: string, value: unknown): boolean {
  try {
    return canonical(JSON.parse(text)) === canonical(value);
  } catch {
    return false;
  }
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}
