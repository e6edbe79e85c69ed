import type { BackendEvent } from '../types.js';

/**
 * A codex turn's reasoning items (the model's reasoning summary) as thinking events, for either
 * parser: `exec` gives each item's text whole (`item.completed`), the app-server streams each
 * summary part (`item/reasoning/summaryTextDelta`) and lists the parts again when the item
 * completes. A blank line goes between two items, and between two parts of one summary.
 */
export class Thoughts {
  /** Each item forwarded (by id): the summary part it is at, and the characters of its text sent. */
  private readonly items = new Map<string, { part: number; chars: number }>();

  /** A piece of item `id`'s summary part `part`. */
  delta(id: string, part: number, text: string): BackendEvent[] {
    const item = this.items.get(id);
    const sep = item === undefined ? (this.items.size > 0 ? '\n\n' : '') : part !== item.part ? '\n\n' : '';
    this.items.set(id, { part, chars: (item?.chars ?? 0) + text.length });
    return text ? [{ type: 'thinking', text: sep + text }] : [];
  }

  /** An item's whole text so far: the part of it not forwarded yet. */
  whole(id: string, text: string): BackendEvent[] {
    const chars = this.items.get(id)?.chars ?? 0;
    return text.length > chars ? this.delta(id, 0, text.slice(chars)) : [];
  }

  /** An app-server reasoning item completed (its `summary`, a list of texts): whole, unless it came in deltas. */
  completed(id: string, summary: unknown): BackendEvent[] {
    if (this.items.has(id) || !Array.isArray(summary)) return [];
    return this.whole(id, summary.filter((s): s is string => typeof s === 'string' && s !== '').join('\n\n'));
  }
}
