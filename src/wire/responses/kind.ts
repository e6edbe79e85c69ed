import type { IncomingHttpHeaders } from 'node:http';
import type { RequestKind } from '../../conversation/index.js';

/**
 * What codex says a request is beside its main conversation: a sub-agent's thread names its
 * parent's (`x-codex-parent-thread-id`, with `x-openai-subagent`; codex 0.171's binary), and its
 * memory generation is background work (`x-openai-memgen-request`).
 */
export function requestKind(headers: IncomingHttpHeaders): RequestKind | undefined {
  if (headers['x-openai-memgen-request'] !== undefined) return 'background';
  if (headers['x-codex-parent-thread-id'] !== undefined || headers['x-openai-subagent'] !== undefined)
    return 'subagent';
  return undefined;
}
