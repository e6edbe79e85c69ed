import { sha256 as h } from '../ids/index.js';
import type { Turn } from '../transcript/index.js';

const ROOT = h('olp-session-v1');

/** Hash of a system prompt (null and empty are the same: none). */
export function systemHash(system: string | null): string {
  return h(`system\u0000${system ?? ''}`);
}

/**
 * Prefix hashes of a hash chain over turns: `chain[i]` covers the first i turns. A slot stores
 * `chain[n]` of the conversation its session has seen; a request continues it when its own
 * chain has the same value at the same length.
 */
export function toChain(turns: readonly Turn[]): string[] {
  const chain = [ROOT];
  for (const t of turns) chain.push(nextLink(chain[chain.length - 1]!, t));
  return chain;
}

/** The chain's next value: `link` (covering some turns) followed by turn `t`. */
export function nextLink(link: string, t: Turn): string {
  const images = (t.images ?? []).map((i) => i.sha256).join(',');
  return h(`${link}\u0000${t.role}\u0000${t.name ?? ''}\u0000${t.key ?? t.text}\u0000${images}`);
}
