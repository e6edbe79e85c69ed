/** What a piece of the reply's text becomes: what may go on now, and the sequence it stopped at. */
export interface StopCut {
  text: string;
  /** The client's stop sequence the reply ends before (nothing of it, or after it, is sent). */
  matched?: string;
}

/** Cuts a reply at the first of the client's stop sequences, piece by piece as its text streams. */
export interface StopMatcher {
  push(text: string): StopCut;
  /** The end of the reply: the text held back as the possible start of a sequence. */
  end(): string;
}

/**
 * A matcher of the client's stop sequences (none, or only empty ones: undefined). It holds back
 * only the end of the text that could still start a sequence (never more than the longest less
 * one character), so a streamed reply waits no longer than it must; a sequence split across
 * pieces is found. Where two sequences match, the one that starts first wins, then the longer.
 */
export function createStopMatcher(sequences: readonly string[] | undefined): StopMatcher | undefined {
  const seqs = [...new Set(sequences ?? [])].filter((q) => q !== '');
  if (seqs.length === 0) return undefined;
  const longest = Math.max(...seqs.map((q) => q.length));
  let held = '';
  let done = false;
  return {
    push(text) {
      if (done) return { text: '' };
      const buf = held + text;
      const hit = firstMatch(buf, seqs);
      if (hit) {
        done = true;
        held = '';
        return { text: buf.slice(0, hit.at), matched: hit.seq };
      }
      const keep = partialTail(buf, seqs, longest);
      held = buf.slice(buf.length - keep);
      return { text: buf.slice(0, buf.length - keep) };
    },
    end() {
      const rest = done ? '' : held;
      held = '';
      return rest;
    },
  };
}

function firstMatch(buf: string, seqs: readonly string[]): { at: number; seq: string } | undefined {
  let best: { at: number; seq: string } | undefined;
  for (const seq of seqs) {
    const at = buf.indexOf(seq);
    if (at < 0) continue;
    if (!best || at < best.at || (at === best.at && seq.length > best.seq.length)) best = { at, seq };
  }
  return best;
}

/** How many characters at the end of `buf` are the start of some sequence (shorter than it). */
function partialTail(buf: string, seqs: readonly string[], longest: number): number {
  for (let k = Math.min(longest - 1, buf.length); k > 0; k--) {
    const tail = buf.slice(buf.length - k);
    if (seqs.some((q) => q.length > k && q.startsWith(tail))) return k;
  }
  return 0;
}
