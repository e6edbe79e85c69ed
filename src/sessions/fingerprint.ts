import { createHash } from 'node:crypto';
import type { Turn } from '../transcript/index.js';

const h = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

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
  const chain = [h('olp-session-v1')];
  for (const t of turns) {
    const images = (t.images ?? []).map((i) => i.sha256).join(',');
    chain.push(h(`${chain[chain.length - 1]}\u0000${t.role}\u0000${t.name ?? ''}\u0000${t.text}\u0000${images}`));
  }
  return chain;
}
