import * as crypto from 'node:crypto';
import type { Turn } from '../transcript/index.js';

// crypto.hash (Node 20.12+) hashes in one call without making a Hash object: about a third of
// createHash's cost, and a request hashes its transcript a few times.
const h: (s: string) => string = typeof crypto.hash === 'function' ? (s) => crypto.hash('sha256', s, 'hex') : (s) => crypto.createHash('sha256').update(s, 'utf8').digest('hex');
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
  for (const t of turns) {
    const images = (t.images ?? []).map((i) => i.sha256).join(',');
    chain.push(h(`${chain[chain.length - 1]}\u0000${t.role}\u0000${t.name ?? ''}\u0000${t.text}\u0000${images}`));
  }
  return chain;
}
