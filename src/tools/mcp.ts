import { match, type Session, take } from './session.js';

const PROTOCOL = '2025-06-18';

/** One JSON-RPC message of MCP's streamable HTTP transport, as a CLI sends it. */
export interface McpMessage {
  id?: string | number;
  method?: string;
  params?: Record<string, unknown>;
}

/** The answer to one MCP message on a session (undefined for a notification); a tool call waits for its result. */
export async function answerMcp(s: Session, m: McpMessage): Promise<unknown> {
  if (m.id === undefined) return undefined; // a notification
  const ok = (result: unknown) => ({ jsonrpc: '2.0', id: m.id, result });
  switch (m.method) {
    case 'initialize':
      return ok({
        protocolVersion: typeof m.params?.protocolVersion === 'string' ? m.params.protocolVersion : PROTOCOL,
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: 'olp', version: '1' },
      });
    case 'ping':
      return ok({});
    case 'tools/list':
      // Read-only: nothing the client's function does is the CLI's to approve (codex asks otherwise).
      return ok({
        tools: s.tools.map((t) => ({
          name: t.name,
          ...(t.description ? { description: t.description } : {}),
          inputSchema: t.parameters,
          annotations: { readOnlyHint: true },
        })),
      });
    case 'tools/call': {
      const name = String(m.params?.name ?? '');
      if (!s.tools.some((t) => t.name === name))
        return ok({ content: [{ type: 'text', text: `No tool named ${name} was offered.` }], isError: true });
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
