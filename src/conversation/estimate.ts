import type { Message } from '../core/index.js';
import { charsToTokens, estimateTurnTokens, IMAGE_TOKENS, isRemote } from '../transcript/index.js';
import { transcriptFor } from './fit.js';
import type { ConversationDeps, ConversationInput } from './types.js';

/**
 * olp's estimate of a request's prompt tokens, without running anything: the conversation as the
 * model's backend would be sent it whole, at the key's calibrated rate, plus the tools' definitions.
 * Remote images are counted, not fetched. Throws what opening the request would (an unknown model, bad content).
 */
export function estimatePromptTokens(deps: ConversationDeps, keyId: string, input: ConversationInput): number {
  const route = deps.registry.resolve(input.model);
  let remote = 0;
  const messages = input.messages.map((m): Message => {
    if (m.role !== 'user') return m;
    const parts = m.parts.filter((p) => {
      if (p.type !== 'image' || !isRemote(p.url)) return true;
      remote++;
      return false;
    });
    return { ...m, parts };
  });
  const t = transcriptFor(deps, keyId, messages, input.responseFormat, input.model, route.backend, input.tools);
  const tools = input.tools ? charsToTokens(JSON.stringify(input.tools.tools).length, t.rate) : 0;
  return estimateTurnTokens(t.full.turns, t.full.system, t.rate) + tools + remote * IMAGE_TOKENS;
}
