// Why a request of an agent's session did not continue the conversation olp kept: each main
// request read as olp reads it (its wire adapter's messages, then the transcript whose turns the
// session pool hashes), against what olp last saw of that conversation (the previous main
// request's turns, then olp's answer to it as the same adapter would read it echoed back). The
// first turn that differs, or a system prompt that changed at a new user turn, is what sends the
// request to another session (olp's `rotation=divergent`, `initial` or `system_changed`).
import type { Message } from '../../src/core/index.js';
import { toTranscript, type Turn } from '../../src/transcript/index.js';
import { parseMessagesRequest, parseResponsesRequest } from '../../src/wire/index.js';
import type { ClientRequest } from './agent-session.js';

type Json = Record<string, unknown>;

/** The data of each SSE event of an answer. */
function sseData(answer: string): Json[] {
  return answer
    .split('\n\n')
    .map((e) => /^data: (.*)$/m.exec(e)?.[1])
    .filter((d): d is string => !!d && d.startsWith('{'))
    .map((d) => JSON.parse(d) as Json);
}

/** A streamed Messages answer as the assistant message's blocks (text, tool_use, thinking). */
function messagesBlocks(answer: string): Json[] {
  const blocks: Json[] = [];
  const json: string[] = [];
  for (const e of sseData(answer)) {
    const i = e.index as number;
    if (e.type === 'content_block_start') {
      blocks[i] = { ...(e.content_block as Json) };
      json[i] = '';
    } else if (e.type === 'content_block_delta') {
      const d = e.delta as Json;
      const b = blocks[i]!;
      if (d.type === 'text_delta') b.text = `${String(b.text ?? '')}${String(d.text)}`;
      else if (d.type === 'thinking_delta') b.thinking = `${String(b.thinking ?? '')}${String(d.thinking)}`;
      else if (d.type === 'signature_delta') b.signature = d.signature;
      else if (d.type === 'input_json_delta') json[i] += String(d.partial_json);
    } else if (e.type === 'content_block_stop' && blocks[i]?.type === 'tool_use' && json[i])
      blocks[i]!.input = JSON.parse(json[i]!);
  }
  return blocks.filter(Boolean);
}

/** A streamed Responses answer as the output items it finished. */
function responsesItems(answer: string): Json[] {
  return sseData(answer)
    .filter((e) => e.type === 'response.output_item.done')
    .map((e) => e.item as Json);
}

/** A main request's messages, and olp's answer to it as the messages a faithful client would send back. */
function read(x: ClientRequest): { messages: Message[]; reply: Message[] } {
  if (x.url.startsWith('/v1/responses')) {
    const messages = parseResponsesRequest(x.body).messages;
    const body = x.body as Json;
    const echoed = parseResponsesRequest({ ...body, input: [...(body.input as Json[]), ...responsesItems(x.answer)] });
    return { messages, reply: echoed.messages.slice(messages.length) };
  }
  const messages = parseMessagesRequest(x.body).messages;
  const body = x.body as { messages: Json[] };
  const echoed = parseMessagesRequest({
    ...body,
    messages: [...body.messages, { role: 'assistant', content: messagesBlocks(x.answer) }],
  });
  return { messages, reply: echoed.messages.slice(messages.length) };
}

/** `a` and `b` with their common head and tail cut, so the difference shows. */
export function difference(a: string, b: string, room = 70): [string, string] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const cut = (s: string) => {
    const mid = s.slice(Math.max(0, head - 20), s.length - tail + 20);
    const shown = mid.length > room * 2 ? `${mid.slice(0, room)}…${mid.slice(-room)}` : mid;
    return `${head > 20 ? '…' : ''}${shown.replace(/\n/g, '\\n')}${tail > 20 ? '…' : ''}`;
  };
  return [cut(a), cut(b)];
}

/** The first tool whose offer differs between two requests (a live CLI keeps the tools it was started with). */
function toolChange(before: unknown, now: unknown): string | undefined {
  const byName = (tools: unknown) =>
    new Map(((tools ?? []) as Json[]).map((t) => [String(t.name ?? t.type), JSON.stringify(t)]));
  const [a, b] = [byName(before), byName(now)];
  for (const [name, spec] of b) {
    const was = a.get(name);
    if (was === undefined) return `the tool ${name} is new`;
    if (was !== spec) {
      const [x, y] = difference(was, spec);
      return `the tool ${name} changed: «${x}» became «${y}»`;
    }
  }
  const gone = [...a.keys()].find((name) => !b.has(name));
  return gone ? `the tool ${gone} is no longer offered` : undefined;
}

const sameTurn = (a: Turn | undefined, b: Turn | undefined) =>
  !!a && !!b && a.role === b.role && a.text === b.text && (a.name ?? '') === (b.name ?? '');

/**
 * For each main request after the first: why its conversation is not the one olp saw last (the
 * previous main request and olp's answer), or undefined when it continues it exactly.
 */
export function explainDivergences(seen: readonly ClientRequest[], main: ReadonlySet<number>): Map<number, string> {
  const out = new Map<number, string>();
  let before: { turns: Turn[]; system: string | null; tools: unknown } | undefined;
  for (const x of seen.filter((r) => main.has(r.n))) {
    const { messages, reply } = read(x);
    const now = toTranscript(messages);
    if (before) {
      const expected = before.turns;
      const i = expected.findIndex((t, k) => !sameTurn(t, now.turns[k]));
      const newUserTurn = now.turns.slice(expected.length).some((t) => t.role === 'user');
      if (i >= 0) {
        const [was, is] = difference(expected[i]!.text, now.turns[i]?.text ?? '(none)');
        out.set(x.n, `turn ${i} (${expected[i]!.role}) differs: olp kept «${was}», the client sent «${is}»`);
      } else if (newUserTurn && before.system !== now.system) {
        const [was, is] = difference(before.system ?? '', now.system ?? '');
        out.set(x.n, `the system prompt changed: «${was}» became «${is}»`);
      }
      const tools = newUserTurn ? toolChange(before.tools, (x.body as Json).tools) : undefined;
      if (tools) out.set(x.n, [out.get(x.n), tools].filter(Boolean).join('; '));
    }
    // What olp keeps of it: these turns, then its answer's (the answer's calls not yet answered).
    const kept = toTranscript([...messages, ...reply]).turns;
    const answered = kept[now.turns.length]?.role === 'assistant' ? 1 : 0;
    before = { turns: kept.slice(0, now.turns.length + answered), system: now.system, tools: (x.body as Json).tools };
  }
  return out;
}
