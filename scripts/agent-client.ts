// An agent client, as codex, opencode or the Agents SDK drive olp: streamed chat completions with
// `tools` on every request, each user turn a parallel tool round trip (the model calls two
// functions, the client answers both, the model answers in text).

export type Variant = 'fake' | 'claude' | 'codex';

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
];
export const CITIES = ['Paris', 'Tokyo'];
/** The fake claude calls tools when the user text holds this directive. */
const FAKE_DIRECTIVE = `[[fake-tools:${JSON.stringify(CITIES.map((city) => ({ name: 'get_weather', arguments: { city } })))}]]`;

interface Call {
  id: string;
  name: string;
  arguments: string;
}

export interface Streamed {
  calls: Call[];
  text: string;
  firstMs: number;
  totalMs: number;
  requestId: string;
}

/** One streamed chat completion: its tool calls, text, first token (call or text) and end, in ms. */
async function stream(url: string, token: string, model: string, messages: unknown[]): Promise<Streamed> {
  const started = performance.now();
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages, tools: TOOLS, stream: true }),
  });
  if (!res.ok || !res.body) throw new Error(`olp answered ${res.status}: ${await res.text()}`);
  const out: Streamed = {
    calls: [],
    text: '',
    firstMs: -1,
    totalMs: 0,
    requestId: res.headers.get('x-request-id') ?? '',
  };
  let buf = '';
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    buf += Buffer.from(chunk).toString('utf8');
    let nl;
    while ((nl = buf.indexOf('\n\n')) !== -1) {
      const data = buf.slice(0, nl).replace(/^data: /, '');
      buf = buf.slice(nl + 2);
      if (!data.startsWith('{')) continue;
      const parsed = JSON.parse(data) as {
        error?: unknown;
        choices?: {
          delta: {
            content?: string | null;
            tool_calls?: { index: number; id?: string; function?: { name?: string; arguments?: string } }[];
          };
        }[];
      };
      if (parsed.error) throw new Error(`olp streamed an error: ${JSON.stringify(parsed.error)}`);
      const delta = parsed.choices?.[0]?.delta;
      if (!delta) continue;
      if ((delta.content || delta.tool_calls) && out.firstMs < 0) out.firstMs = performance.now() - started;
      out.text += delta.content ?? '';
      for (const d of delta.tool_calls ?? []) {
        if (d.id) out.calls[d.index] = { id: d.id, name: d.function?.name ?? '', arguments: '' };
        out.calls[d.index]!.arguments += d.function?.arguments ?? '';
      }
    }
  }
  out.totalMs = performance.now() - started;
  return out;
}

/** One user turn: the calls, then the results; both requests' timings and ids. */
export async function userTurn(
  url: string,
  token: string,
  variant: Variant,
  messages: unknown[],
  turn: number,
): Promise<{ calls: Streamed; answer: Streamed }> {
  const ask = `What is the weather in ${CITIES.join(' and ')} now? (turn ${turn})`;
  messages.push({ role: 'user', content: variant === 'fake' ? `${ask} ${FAKE_DIRECTIVE}` : ask });
  const model = variant === 'codex' ? 'codex' : 'sonnet';
  const calls = await stream(url, token, model, messages);
  if (calls.calls.length !== CITIES.length)
    throw new Error(`${variant} turn ${turn}: expected ${CITIES.length} tool calls, got ${JSON.stringify(calls)}`);
  messages.push({
    role: 'assistant',
    content: null,
    tool_calls: calls.calls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    })),
  });
  for (const c of calls.calls)
    messages.push({ role: 'tool', tool_call_id: c.id, content: `turn ${turn}: sunny, 21 C for ${c.arguments}` });
  const answer = await stream(url, token, model, messages);
  if (!answer.text || answer.calls.length > 0)
    throw new Error(`${variant} turn ${turn}: expected a text answer, got ${JSON.stringify(answer)}`);
  messages.push({ role: 'assistant', content: answer.text });
  return { calls, answer };
}
