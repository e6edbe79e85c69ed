// What a recording keeps of a tool-call turn. The client's tool results are its input, like the
// prompt, and the model's tool arguments are built from it: neither is stored. The rest of the
// line stays, so a replay still shows the calls (named, with `{}` arguments) and the turn's shape.

const RESULT_MARK = '[tool result omitted]';
/** Substrings a line must hold for scrubbing to parse it: most lines skip the JSON parse. */
const HINTS = ['"tool_use"', '"tool_result"', '"input_json_delta"', '"mcp_tool_call"', '"function_call'];

type Json = unknown;

function scrubValue(v: Json): Json {
  if (Array.isArray(v)) return v.map(scrubValue);
  if (!v || typeof v !== 'object') return v;
  const o = { ...(v as Record<string, Json>) };
  // claude repeats a tool's result beside the user line that carries it.
  if ('tool_use_result' in o) o.tool_use_result = RESULT_MARK;
  switch (o.type) {
    case 'tool_use': // claude: a call, whole
      if ('input' in o) o.input = {};
      break;
    case 'input_json_delta': // claude: a call's arguments, streamed
      if ('partial_json' in o) o.partial_json = '';
      break;
    case 'tool_result': // claude: the client's result, as the CLI hands it to the model
      if ('content' in o) o.content = RESULT_MARK;
      break;
    case 'mcp_tool_call': // codex exec: the call and its result in one item
      if ('arguments' in o) o.arguments = {};
      if (o.result && typeof o.result === 'object')
        o.result = { content: [{ type: 'text', text: RESULT_MARK }], structured_content: null };
      break;
    case 'function_call': // codex app-server: a call item
      if ('arguments' in o) o.arguments = '{}';
      break;
    case 'function_call_output':
      if ('output' in o) o.output = RESULT_MARK;
      break;
  }
  for (const [k, child] of Object.entries(o)) if (child && typeof child === 'object') o[k] = scrubValue(child);
  return o;
}

/** The line as a recording stores it: tool arguments and results taken out; other lines as they are. */
export function scrubToolData(line: string): string {
  if (!HINTS.some((h) => line.includes(h))) return line;
  try {
    return JSON.stringify(scrubValue(JSON.parse(line)));
  } catch {
    return line;
  }
}
