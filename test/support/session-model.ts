// A scripted model behind olp's backend CLIs, for a coding agent's session through olp: loopback
// stand-ins for the Anthropic Messages and OpenAI Responses APIs that, per user prompt, call the
// client's tools as olp offers them to the CLI (claude: `mcp__olp__<name>`; codex: functions of the
// `mcp__olp` namespace), one call a request, each once, then answer in text. The turn and step are
// read from the request itself (the latest prompt of the script it holds, and the calls made after
// it), whether the history is the CLI's own (a live process, a resumed session) or olp's transcript
// rendered into one prompt (a fresh session), so a request is answered the same however olp ran it.
// Every request is timed: the model's share of a request through olp.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { type AnthropicBlock, writeMessage, writeResponse } from '../../scripts/capture-stand-ins.js';
import { createHttpServer } from '../../src/http/index.js';
import { listenLoopback } from './listen.js';

/** One user turn of the script: its prompt, the calls the model makes for it in order, its closing text. */
export interface ScriptTurn<Call> {
  prompt: string;
  calls: Call[];
  done: string;
}

export interface ClaudeCall {
  name: string;
  input: Record<string, unknown>;
}

export interface CodexCall {
  /** The client's shell tool (`exec_command`), with this command. */
  shell?: string;
  /** The client's `apply_patch`, with this patch. */
  patch?: string;
}

/** One request the model answered: how it read it, and when (performance.now() of this process). */
export interface ModelCall {
  kind: 'main' | 'background';
  /** 1-based, for main requests. */
  turn?: number;
  step?: number;
  /** What it answered: a call's tool name, or `text`. */
  answered: string;
  at: number;
  ms: number;
}

export interface SessionModel<Call> {
  url: string;
  /** The script the main conversation follows (set per session). */
  script: ScriptTurn<Call>[];
  calls: ModelCall[];
  /** The model's time before it answers (ms; default 0). */
  latencyMs: number;
  close(): Promise<void>;
}

/** Both sessions end with these files in the project dir. */
export const SESSION_FILES: Record<string, string> = { 'a.txt': 'alpha gamma\n', 'b.txt': 'bravo charlie\n' };

const PROMPTS = [
  'Create a.txt with the word alpha in it, then append beta to that line.',
  'Now edit a.txt: replace beta with gamma.',
  'Last one: write b.txt with bravo in it, then append charlie.',
];

/** Claude Code's session (as test/fixtures/reference/clients was captured): Write or Read, then Edit, per prompt. */
export function claudeScript(work: string): ScriptTurn<ClaudeCall>[] {
  const a = join(work, 'a.txt');
  const b = join(work, 'b.txt');
  const edit = (file_path: string, old_string: string, new_string: string) => ({
    name: 'Edit',
    input: { file_path, old_string, new_string },
  });
  return [
    {
      prompt: PROMPTS[0]!,
      calls: [{ name: 'Write', input: { file_path: a, content: 'alpha\n' } }, edit(a, 'alpha', 'alpha beta')],
      done: 'a.txt now reads "alpha beta".',
    },
    {
      prompt: PROMPTS[1]!,
      calls: [{ name: 'Read', input: { file_path: a } }, edit(a, 'beta', 'gamma')],
      done: 'a.txt now reads "alpha gamma".',
    },
    {
      prompt: PROMPTS[2]!,
      calls: [{ name: 'Write', input: { file_path: b, content: 'bravo\n' } }, edit(b, 'bravo', 'bravo charlie')],
      done: 'b.txt now reads "bravo charlie".',
    },
  ];
}

/** codex's session: a shell command, then apply_patch, per prompt (paths relative to its work dir). */
export function codexScript(): ScriptTurn<CodexCall>[] {
  const update = (file: string, from: string, to: string) =>
    `*** Begin Patch\n*** Update File: ${file}\n@@\n-${from}\n+${to}\n*** End Patch\n`;
  return [
    {
      prompt: PROMPTS[0]!,
      calls: [{ shell: "printf 'alpha\\n' > a.txt" }, { patch: update('a.txt', 'alpha', 'alpha beta') }],
      done: 'a.txt now reads "alpha beta".',
    },
    {
      prompt: PROMPTS[1]!,
      calls: [{ shell: 'cat a.txt' }, { patch: update('a.txt', 'alpha beta', 'alpha gamma') }],
      done: 'a.txt now reads "alpha gamma".',
    },
    {
      prompt: PROMPTS[2]!,
      calls: [{ shell: "printf 'bravo\\n' > b.txt" }, { patch: update('b.txt', 'bravo', 'bravo charlie') }],
      done: 'b.txt now reads "bravo charlie".',
    },
  ];
}

/** A marker for a call the model made, in a request's text read in order. */
const CALL = '\u0001call\u0001';

/**
 * Where a request is in the script: the latest turn whose prompt its text holds, and how many calls
 * were made after that prompt (native calls, or `<tool_call` of olp's rendered transcript).
 */
export function placeIn(text: string, prompts: readonly string[]): { turn: number; step: number } | undefined {
  for (let turn = prompts.length - 1; turn >= 0; turn--) {
    const at = text.lastIndexOf(prompts[turn]!);
    if (at < 0) continue;
    const after = text.slice(at);
    const step = after.split(CALL).length - 1 + (after.match(/<tool_call\b/g)?.length ?? 0);
    return { turn, step };
  }
  return undefined;
}

// --- Anthropic Messages (claude) ----------------------------------------------------------------

type Block = { type: string; text?: string; content?: unknown; name?: string };

interface MessagesBody {
  model?: string;
  stream?: boolean;
  tools?: { name?: string }[];
  thinking?: { type?: string; display?: string };
  messages?: { role: string; content: string | Block[] }[];
}

/** A tool_result's content as text. */
function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  return Array.isArray(content) ? (content as Block[]).map((b) => b.text ?? '').join('') : '';
}

/** A Messages request's conversation as one text, calls marked, in order. */
function messagesText(body: MessagesBody): string {
  return (body.messages ?? [])
    .flatMap((m) =>
      typeof m.content === 'string'
        ? [m.content]
        : m.content.map((b) =>
            b.type === 'text' ? (b.text ?? '') : b.type === 'tool_use' ? CALL : resultText(b.content),
          ),
    )
    .join('\n');
}

/** The offered tool a scripted call names: olp's MCP name for it, or the tool itself. */
function offeredName(tools: { name?: string }[], name: string): string | undefined {
  return tools.find((t) => t.name === `mcp__olp__${name}` || t.name === name)?.name;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
  } catch {
    return null;
  }
}

const sleep = (ms: number) => (ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve());

/**
 * The Anthropic stand-in: a request offering the script's tools (Write) is the main conversation,
 * answered with the turn's next call (a thinking block first when thinking is on), or its closing
 * text; any other (Claude Code's title request: no tools) gets `{"title": …}` as text.
 */
export async function startClaudeSessionModel(): Promise<SessionModel<ClaudeCall>> {
  let n = 0;
  const model: SessionModel<ClaudeCall> = { url: '', script: [], calls: [], latencyMs: 0, close: async () => {} };
  const server = createHttpServer(async (req: IncomingMessage, res: ServerResponse) => {
    const body = ((await readJson(req)) ?? {}) as MessagesBody;
    const path = (req.url ?? '').split('?')[0]!;
    if (req.method !== 'POST' || path !== '/v1/messages') {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(path.endsWith('/count_tokens') ? '{"input_tokens":100}' : '{}');
      return;
    }
    const at = performance.now();
    await sleep(model.latencyMs);
    const tools = body.tools ?? [];
    const reply = { id: `msg_session_${++n}`, model: body.model ?? 'claude', stream: !!body.stream };
    const place = offeredName(tools, 'Write')
      ? placeIn(
          messagesText(body),
          model.script.map((t) => t.prompt),
        )
      : undefined;
    if (!place) {
      model.calls.push({ kind: 'background', answered: 'text', at, ms: performance.now() - at });
      writeMessage(res, { ...reply, blocks: [{ type: 'text', text: '{"title":"Agent session"}' }] });
      return;
    }
    const turn = model.script[place.turn]!;
    const call = turn.calls[place.step];
    const thinking = body.thinking?.type === 'enabled' || body.thinking?.type === 'adaptive';
    const thought = body.thinking?.display === 'omitted' ? '' : `Turn ${place.turn + 1}, step ${place.step + 1}.`;
    const blocks: AnthropicBlock[] = [
      ...(thinking ? [{ type: 'thinking' as const, thinking: thought, signature: `sig-session-${n}` }] : []),
      call
        ? {
            type: 'tool_use',
            id: `toolu_session_${n}`,
            name: offeredName(tools, call.name) ?? call.name,
            input: call.input,
          }
        : { type: 'text', text: turn.done },
    ];
    model.calls.push({
      kind: 'main',
      turn: place.turn + 1,
      step: place.step + 1,
      answered: call?.name ?? 'text',
      at,
      ms: performance.now() - at,
    });
    writeMessage(res, { ...reply, blocks });
  });
  const { url, close } = await listenLoopback(server);
  model.url = url;
  model.close = close;
  return model;
}

// --- OpenAI Responses (codex) -------------------------------------------------------------------

interface ResponsesBody {
  model?: string;
  tools?: unknown[];
  include?: string[];
  input?: { type?: string; role?: string; content?: unknown; output?: unknown }[];
}

const CALL_ITEMS = ['function_call', 'custom_tool_call', 'local_shell_call'];

/** A Responses request's input as one text, calls marked, in order. */
function inputText(body: ResponsesBody): string {
  return (body.input ?? [])
    .map((i) => {
      if (CALL_ITEMS.includes(i.type ?? '')) return CALL;
      const content = i.content ?? i.output;
      if (typeof content === 'string') return content;
      return Array.isArray(content) ? (content as { text?: string }[]).map((c) => c.text ?? '').join('\n') : '';
    })
    .join('\n');
}

/** The call of the script as the backend codex calls olp's tools: a function of the `mcp__olp` namespace. */
function codexCallItem(call: CodexCall, n: number): Record<string, unknown> {
  const args = call.shell !== undefined ? { cmd: call.shell } : { input: call.patch };
  return {
    type: 'function_call',
    id: `fc_session_${n}`,
    call_id: `call_session_${n}`,
    namespace: 'mcp__olp',
    name: call.shell !== undefined ? 'exec_command' : 'apply_patch',
    arguments: JSON.stringify(args),
    status: 'completed',
  };
}

/**
 * Whether olp's tools (the `mcp__olp` namespace) are loaded for the model (in `tools`, or found by an
 * earlier tool search: a `tool_search_output` or `additional_tools` item), or deferred: named in
 * codex's developer message as a namespace to search for (codex 0.171 with a gpt-* model).
 */
function olpTools(body: ResponsesBody): { loaded: boolean; deferred: boolean } {
  const found = (body.input ?? []).filter((i) => i.type === 'tool_search_output' || i.type === 'additional_tools');
  const loaded = JSON.stringify([body.tools ?? [], found]).includes('"name":"mcp__olp"');
  const deferred = /Deferred tool namespaces:(?:(?!<\/tools>).)*mcp__olp/s.test(JSON.stringify(body.input ?? []));
  return { loaded, deferred };
}

/** A search of codex's deferred tools, as the model asks for one (codex runs it: `execution: client`). */
function toolSearchItem(n: number): Record<string, unknown> {
  return {
    type: 'tool_search_call',
    id: `tsc_session_${n}`,
    call_id: `call_search_${n}`,
    status: 'completed',
    execution: 'client',
    arguments: { query: 'exec_command apply_patch', limit: 8 },
  };
}

/**
 * The Responses stand-in: a request offering olp's tools (the `mcp__olp` namespace) is the main
 * conversation, answered with the turn's next call or its closing message (a reasoning item with
 * encrypted content first when the request includes it); any other gets a short message.
 */
export async function startCodexSessionModel(): Promise<SessionModel<CodexCall>> {
  let n = 0;
  const model: SessionModel<CodexCall> = { url: '', script: [], calls: [], latencyMs: 0, close: async () => {} };
  const server = createHttpServer(async (req: IncomingMessage, res: ServerResponse) => {
    const raw = await readJson(req);
    if (req.method !== 'POST' || !(req.url ?? '').split('?')[0]!.endsWith('/responses')) {
      res.writeHead(404).end();
      return;
    }
    const body = (raw ?? {}) as ResponsesBody;
    const at = performance.now();
    await sleep(model.latencyMs);
    const id = `resp_session_${++n}`;
    const message = (text: string) => ({
      type: 'message',
      id: `msg_session_${n}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text, annotations: [] }],
    });
    const { loaded, deferred } = olpTools(body);
    const place =
      loaded || deferred
        ? placeIn(
            inputText(body),
            model.script.map((t) => t.prompt),
          )
        : undefined;
    if (!place) {
      model.calls.push({ kind: 'background', answered: 'text', at, ms: performance.now() - at });
      writeResponse(res, { id, model: body.model ?? 'codex', items: [message('ok')] });
      return;
    }
    const turn = model.script[place.turn]!;
    const call = turn.calls[place.step];
    const reasoning = (body.include ?? []).includes('reasoning.encrypted_content')
      ? [
          {
            type: 'reasoning',
            id: `rs_session_${n}`,
            summary: [{ type: 'summary_text', text: `Turn ${place.turn + 1}, step ${place.step + 1}.` }],
            encrypted_content: `enc-session-${n}`,
          },
        ]
      : [];
    // olp's tools not loaded yet (codex defers MCP tools behind its tool search): search for them first.
    const search = call && !loaded;
    const items = [...reasoning, search ? toolSearchItem(n) : call ? codexCallItem(call, n) : message(turn.done)];
    model.calls.push({
      kind: 'main',
      turn: place.turn + 1,
      step: place.step + 1,
      answered: search ? 'tool_search' : call ? (call.shell !== undefined ? 'exec_command' : 'apply_patch') : 'text',
      at,
      ms: performance.now() - at,
    });
    writeResponse(res, { id, model: body.model ?? 'codex', items });
  });
  const { url, close } = await listenLoopback(server);
  model.url = url;
  model.close = close;
  return model;
}
