// A JSON reply wrapped in a Markdown code fence (```json … ```), as models write it even when
// told not to, reaches a JSON-mode client as the JSON alone. Streamed text is held back only as
// far as a fence could still be forming: the opening line at the start, and a closing fence's
// few characters at the end.

const OPEN = /^\s*```[A-Za-z0-9_-]*[ \t]*\r?\n/;
/** The longest text that may still become an opening fence line (``` + a language tag + newline). */
const OPEN_MAX = 40;
const CLOSE = /\r?\n?[ \t]*```\s*$/;
/** Held back at the end: a newline, the closing fence and trailing white space. */
const CLOSE_HOLD = 8;

export interface FenceStripper {
  /** The text to pass on now. */
  push(text: string): string;
  /** The rest, at the end of the reply. */
  end(): string;
}

export function createFenceStripper(): FenceStripper {
  let head = ''; // text before the opening fence is decided
  let decided = false;
  let fenced = false;
  let tail = ''; // held back in case it is the closing fence

  function release(text: string): string {
    if (!fenced) return text;
    tail += text;
    if (tail.length <= CLOSE_HOLD) return '';
    const out = tail.slice(0, tail.length - CLOSE_HOLD);
    tail = tail.slice(tail.length - CLOSE_HOLD);
    return out;
  }

  return {
    push(text) {
      if (decided) return release(text);
      head += text;
      const m = OPEN.exec(head);
      if (m) {
        decided = true;
        fenced = true;
        const rest = head.slice(m[0].length);
        head = '';
        return release(rest);
      }
      // Still only white space and backticks and a tag: it may yet be a fence.
      if (head.length < OPEN_MAX && /^\s*(?:`{1,3}[A-Za-z0-9_-]*[ \t]*\r?)?$/.test(head)) return '';
      decided = true;
      const out = head;
      head = '';
      return out;
    },
    end() {
      if (!decided) return head;
      if (!fenced) return '';
      return tail.replace(CLOSE, '');
    },
  };
}
