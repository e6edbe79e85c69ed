import type { IncomingHttpHeaders } from 'node:http';
import type { RequestKind } from '../../conversation/index.js';
import type { MessagesRequest } from './schema.js';

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/**
 * What Claude Code says a request is beside its main conversation (see
 * test/fixtures/reference/clients/README.md): a sub-agent's requests carry
 * `x-claude-code-agent-id`; later versions name the request's class in
 * `x-claude-code-request-class` (`auxiliary` and `side_reply` are background work); 2.1.197's
 * background request (the session's title) offers an empty `tools` list and holds no reply yet.
 */
export function requestKind(headers: IncomingHttpHeaders, body: MessagesRequest): RequestKind | undefined {
  const cls = header(headers, 'x-claude-code-request-class');
  if (cls === 'auxiliary' || cls === 'side_reply') return 'background';
  if (cls === 'subagent' || header(headers, 'x-claude-code-agent-id') !== undefined) return 'subagent';
  const offersNone = Array.isArray(body.tools) && body.tools.length === 0;
  if (cls === undefined && offersNone && body.messages.every((m) => m.role !== 'assistant')) return 'background';
  return undefined;
}
