import { toReasoningItem } from './shapes.js';

// The model's thinking on a Responses stream, as OpenAI streams a reasoning item's summary:
// `response.output_item.added` (the item, no summary yet), `response.reasoning_summary_part.added`,
// `response.reasoning_summary_text.delta`…, then `.text.done`, `.part.done` and
// `response.output_item.done` with the whole summary. One thinking block is one item of one
// summary part; a block ends at its signature, or where the answer (text or a call) starts.

/** One reasoning item of the stream: its output index and the text of its summary so far. */
export interface StreamedReasoning {
  id: string;
  index: number;
  text: string;
  done: boolean;
}

type Out = { type: string; data: Record<string, unknown> }[];

const at = (r: StreamedReasoning) => ({ item_id: r.id, output_index: r.index, summary_index: 0 });

/** A piece of thinking: the item opened when none is (`open` makes one at the next output index). */
export function thinkingEvents(
  items: StreamedReasoning[],
  ev: { text: string; signature?: string },
  open: () => StreamedReasoning,
  out: Out,
): void {
  if (ev.text !== '') {
    let r = items.at(-1);
    if (!r || r.done) {
      r = open();
      items.push(r);
      out.push({
        type: 'response.output_item.added',
        data: { output_index: r.index, item: toReasoningItem(r.id, '') },
      });
      out.push({
        type: 'response.reasoning_summary_part.added',
        data: { ...at(r), part: { type: 'summary_text', text: '' } },
      });
    }
    r.text += ev.text;
    out.push({ type: 'response.reasoning_summary_text.delta', data: { ...at(r), delta: ev.text } });
  }
  if (ev.signature) closeReasoning(items, out);
}

/** The open reasoning item's closing events, if one is open. */
export function closeReasoning(items: StreamedReasoning[], out: Out): void {
  const r = items.at(-1);
  if (!r || r.done) return;
  r.done = true;
  out.push({ type: 'response.reasoning_summary_text.done', data: { ...at(r), text: r.text } });
  out.push({
    type: 'response.reasoning_summary_part.done',
    data: { ...at(r), part: { type: 'summary_text', text: r.text } },
  });
  out.push({ type: 'response.output_item.done', data: { output_index: r.index, item: toReasoningItem(r.id, r.text) } });
}
