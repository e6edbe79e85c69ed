import { charsToTokens, estimateTurnTokens, IMAGE_TOKENS } from '../transcript/index.js';
import type { ChatMessage } from '../validate/index.js';
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
  const messages = input.messages.map((m): ChatMessage => {
    if (m.role !== 'user' || !Array.isArray(m.content)) return m;
    const content = m.content.filter((p) => {
      const url = p.type === 'image_url' ? p.image_url.url : '';
      if (!/^https?:\/\//i.test(url)) return true;
      remote++;
      return false;
    });
    return { ...m, content };
  });
  const t = transcriptFor(deps, keyId, messages, input.responseFormat, input.model, route.backend, input.tools);
  const tools = input.tools ? charsToTokens(JSON.stringify(input.tools.tools).length, t.rate) : 0;
  return estimateTurnTokens(t.full.turns, t.full.system, t.rate) + tools + remote * IMAGE_TOKENS;
}
