// What the real coding agents send as clients over a multi-turn session with tool steps: the pinned
// claude binaries (2.1.197 and the current release) and the pinned codex, each pointed at a loopback
// stand-in API that records every request and answers as a model would. Per user prompt the model
// calls two tools, one at a time (claude: Write or Read, then Edit; codex: its shell tool, then
// apply_patch), then answers in text; each call is made once, never looped. Three user turns in one
// project dir: `claude -p`, then `claude --continue -p` twice; `codex exec`, then `codex exec resume
// --last` twice. The files the tools wrote are checked on disk, and the recorded requests go to
// test/fixtures/reference/clients/<client>-<version>-session.jsonl (see the README there).
// Usage: node dist/scripts/capture-agent-sessions.js [--only claude|codex] [--keep] [--essential-only]
// --keep leaves the temp dir, with each run's requests uncut in <run>/session-whole.jsonl;
// --essential-only sets CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 for claude, as olp's backend does.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CLAUDE_BASELINE, CLAUDE_CURRENT, REAL_CODEX, ROOT } from '../test/support/paths.js';
import {
  type AnthropicBlock,
  type Answerer,
  type Recorded,
  replacementsFor,
  startRecorder,
  writeMessage,
  writeResponse,
  writeSession,
} from './capture-stand-ins.js';

const OUT = join(ROOT, 'test/fixtures/reference/clients');
const CLAUDE_KEY = 'sk-ant-api03-capture-dummy-key-000';
const CODEX_KEY = 'sk-capture-dummy-key-000';

/** One user turn: its prompt, the tool calls the model makes for it in order, its closing text. */
interface Turn<Call> {
  prompt: string;
  calls: Call[];
  done: string;
}

/** What a session left on disk, checked against what the model wrote. */
type Expected = Record<string, string>;

interface Outcome {
  name: string;
  ok: boolean;
  lines: string[];
}

// --- driving the CLIs ------------------------------------------------------------------------

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function run(bin: string, args: string[], o: { cwd: string; env: Record<string, string> }): Promise<Run> {
  return new Promise((resolve) => {
    const c = spawn(bin, args, { cwd: o.cwd, env: o.env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 180_000 });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    c.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    c.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** The files under `dir` against the expected contents: one line each, and whether all match. */
function checkFiles(dir: string, expected: Expected): { ok: boolean; lines: string[] } {
  const lines = Object.entries(expected).map(([file, want]) => {
    const path = join(dir, file);
    const got = existsSync(path) ? readFileSync(path, 'utf8') : '(missing)';
    if (got === want) return `ok   ${file}: ${JSON.stringify(got)}`;
    return `BAD  ${file}: ${JSON.stringify(got)} (want ${JSON.stringify(want)})`;
  });
  return { ok: lines.every((l) => l.startsWith('ok')), lines };
}

const tail = (s: string, n = 400) => (s.length > n ? `…${s.slice(-n)}` : s).trim().replace(/\n/g, '\n      ');

/** Runs the turns one after the other, logging each; false when one exits non-zero. */
async function drive(
  label: string,
  turns: { args: string[] }[],
  start: (args: string[]) => Promise<Run>,
  lines: string[],
): Promise<boolean> {
  let ok = true;
  for (const [i, t] of turns.entries()) {
    const r = await start(t.args);
    lines.push(`turn ${i + 1}: ${label} ${t.args.slice(0, -1).join(' ')} "…" → exit ${r.status}`);
    lines.push(`      stdout: ${tail(r.stdout) || '(none)'}`);
    if (r.status !== 0) lines.push(`      stderr: ${tail(r.stderr) || '(none)'}`);
    ok &&= r.status === 0;
  }
  return ok;
}

// --- which turn and step a request is at -----------------------------------------------------

/** The latest turn whose prompt a user message holds, and that message's index. */
function findTurn(userTexts: (string | null)[], prompts: string[]): { turn: number; index: number } | undefined {
  for (let index = userTexts.length - 1; index >= 0; index--) {
    const text = userTexts[index];
    if (text == null) continue;
    for (let turn = prompts.length - 1; turn >= 0; turn--) if (text.includes(prompts[turn]!)) return { turn, index };
  }
  return undefined;
}

function answerOther(rec: Recorded, res: ServerResponse, status: number, body: unknown): void {
  rec.answer = { role: 'other', status };
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

// --- claude ----------------------------------------------------------------------------------

interface ClaudeCall {
  name: string;
  input: Record<string, unknown>;
}

interface MessagesBody {
  model: string;
  stream?: boolean;
  tools?: { name?: string }[];
  thinking?: { type?: string; display?: string };
  output_config?: { format?: { type?: string; schema?: { properties?: Record<string, { type?: string }> } } };
  messages?: { role: string; content: string | { type: string; text?: string }[] }[];
}

function claudeTurns(work: string): Turn<ClaudeCall>[] {
  const a = join(work, 'a.txt');
  const b = join(work, 'b.txt');
  return [
    {
      prompt: 'Create a.txt with the word alpha in it, then append beta to that line.',
      calls: [
        { name: 'Write', input: { file_path: a, content: 'alpha\n' } },
        { name: 'Edit', input: { file_path: a, old_string: 'alpha', new_string: 'alpha beta' } },
      ],
      done: 'a.txt now reads "alpha beta".',
    },
    {
      prompt: 'Now edit a.txt: replace beta with gamma.',
      calls: [
        { name: 'Read', input: { file_path: a } },
        { name: 'Edit', input: { file_path: a, old_string: 'beta', new_string: 'gamma' } },
      ],
      done: 'a.txt now reads "alpha gamma".',
    },
    {
      prompt: 'Last one: write b.txt with bravo in it, then append charlie.',
      calls: [
        { name: 'Write', input: { file_path: b, content: 'bravo\n' } },
        { name: 'Edit', input: { file_path: b, old_string: 'bravo', new_string: 'bravo charlie' } },
      ],
      done: 'b.txt now reads "bravo charlie".',
    },
  ];
}

const CLAUDE_FILES: Expected = { 'a.txt': 'alpha gamma\n', 'b.txt': 'bravo charlie\n' };

function claudeUserText(m: NonNullable<MessagesBody['messages']>[number]): string | null {
  if (m.role !== 'user') return null;
  if (typeof m.content === 'string') return m.content;
  return m.content.map((b) => (b.type === 'text' ? (b.text ?? '') : '')).join('\n');
}

/**
 * A background request's answer: a short text, or under a JSON schema (claude's session titles
 * ask for `{"title": …}`) an object of it, each string property a short text.
 */
function backgroundText(body: MessagesBody): string {
  const format = body.output_config?.format;
  if (format?.type !== 'json_schema') return 'Capture session';
  const props = Object.entries(format.schema?.properties ?? {});
  return JSON.stringify(
    Object.fromEntries(
      props.map(([k, v]) => [k, v.type === 'string' ? 'Capture session' : v.type === 'boolean' ? false : null]),
    ),
  );
}

/** The tool_use blocks of the assistant messages after the one at `index`: the calls made this turn. */
function callsSince(messages: NonNullable<MessagesBody['messages']>, index: number): number {
  return messages
    .slice(index + 1)
    .filter((m) => m.role === 'assistant')
    .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    .filter((b) => b.type === 'tool_use').length;
}

/**
 * The main conversation's requests (those offering Write) get the turn's next tool call, or its
 * closing text once every call has been made; with thinking on, a thinking block comes first (its
 * text empty when the request asks for `display: "omitted"`, as the API sends it then). Other
 * requests (background: no Write offered) get backgroundText.
 */
function claudeAnswerer(turns: Turn<ClaudeCall>[]): Answerer {
  let n = 0;
  return (rec, res) => {
    const path = rec.url.split('?')[0]!;
    if (rec.method !== 'POST' || !path.startsWith('/v1/messages')) return answerOther(rec, res, 200, {});
    if (path !== '/v1/messages') return answerOther(rec, res, 200, { input_tokens: 100 });
    const body = rec.body as MessagesBody;
    const messages = body.messages ?? [];
    const reply = { id: `msg_capture_${++n}`, model: body.model, stream: !!body.stream };
    const main = (body.tools ?? []).some((t) => t.name === 'Write');
    const at = main
      ? findTurn(
          messages.map(claudeUserText),
          turns.map((t) => t.prompt),
        )
      : undefined;
    if (!at) {
      const text = backgroundText(body);
      rec.answer = { role: main ? 'main (no prompt of ours found)' : 'background', text };
      return writeMessage(res, { ...reply, blocks: [{ type: 'text', text }] });
    }
    const step = callsSince(messages, at.index);
    const turn = turns[at.turn]!;
    const call = turn.calls[step];
    const thought = body.thinking?.display === 'omitted' ? '' : `Turn ${at.turn + 1}, step ${step + 1}.`;
    const blocks: AnthropicBlock[] = [
      ...(body.thinking != null && body.thinking.type !== 'disabled'
        ? [{ type: 'thinking' as const, thinking: thought, signature: `sig-capture-${n}` }]
        : []),
      call
        ? { type: 'tool_use', id: `toolu_capture_t${at.turn + 1}s${step + 1}`, name: call.name, input: call.input }
        : { type: 'text', text: turn.done },
    ];
    rec.answer = { role: 'main', turn: at.turn + 1, step: step + 1, promptAt: at.index, blocks };
    writeMessage(res, { ...reply, blocks });
  };
}

async function captureClaude(bin: string, tmp: string, essentialOnly: boolean): Promise<Outcome> {
  if (!existsSync(bin)) return { name: bin, ok: false, lines: [`no claude at ${bin}`] };
  const version = JSON.parse(readFileSync(join(bin, '../../package.json'), 'utf8')).version as string;
  const name = `claude-code-${version}`;
  const lines: string[] = [];
  const dir = mkdtempSync(join(tmp, `${name}-`));
  const home = join(dir, 'home');
  const work = join(dir, 'work');
  mkdirSync(join(home, 'tmp'), { recursive: true });
  mkdirSync(work);
  const turns = claudeTurns(work);
  const rec = await startRecorder(claudeAnswerer(turns));
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    TMPDIR: join(home, 'tmp'),
    ANTHROPIC_BASE_URL: rec.url,
    ANTHROPIC_API_KEY: CLAUDE_KEY,
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    ...(essentialOnly ? { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' } : {}),
    CLAUDE_CODE_MAX_RETRIES: '0',
  };
  try {
    const args = turns.map((t, i) => ({
      args: [...(i > 0 ? ['--continue'] : []), '--permission-mode', 'acceptEdits', '-p', t.prompt],
    }));
    const ran = await drive('claude', args, (a) => run(bin, a, { cwd: work, env }), lines);
    const files = checkFiles(work, CLAUDE_FILES);
    lines.push(...files.lines);
    const out = join(OUT, `${name}-session.jsonl`);
    writeSession(out, rec.seen, replacementsFor(dir, CLAUDE_KEY));
    writeSession(join(dir, 'session-whole.jsonl'), rec.seen, replacementsFor(dir, CLAUDE_KEY), true);
    lines.push(`${rec.seen.length} requests → ${out.slice(ROOT.length)}`, ...roles(rec.seen));
    return { name, ok: ran && files.ok, lines };
  } finally {
    await rec.close();
  }
}

/** One line per request: its number, path, and how the stand-in read it. */
function roles(seen: Recorded[]): string[] {
  return seen.map((r) => {
    const a = r.answer ?? {};
    const at = a.turn ? ` turn ${a.turn} step ${a.step}` : '';
    return `  #${r.n} ${r.method} ${r.url} ${String(a.role ?? '')}${at}`;
  });
}

// --- codex -----------------------------------------------------------------------------------

interface CodexCall {
  shell?: string;
  patch?: string;
}

interface ResponsesBody {
  model: string;
  include?: string[];
  tools?: { type: string; name?: string }[];
  input?: { type?: string; role?: string; content?: string | { type?: string; text?: string }[] }[];
}

function codexTurns(): Turn<CodexCall>[] {
  const update = (file: string, from: string, to: string) =>
    `*** Begin Patch\n*** Update File: ${file}\n@@\n-${from}\n+${to}\n*** End Patch\n`;
  return [
    {
      prompt: 'Create a.txt with the word alpha in it, then append beta to that line.',
      calls: [{ shell: "printf 'alpha\\n' > a.txt" }, { patch: update('a.txt', 'alpha', 'alpha beta') }],
      done: 'a.txt now reads "alpha beta".',
    },
    {
      prompt: 'Now edit a.txt: replace beta with gamma.',
      calls: [{ shell: 'cat a.txt' }, { patch: update('a.txt', 'alpha beta', 'alpha gamma') }],
      done: 'a.txt now reads "alpha gamma".',
    },
    {
      prompt: 'Last one: write b.txt with bravo in it, then append charlie.',
      calls: [{ shell: "printf 'bravo\\n' > b.txt" }, { patch: update('b.txt', 'bravo', 'bravo charlie') }],
      done: 'b.txt now reads "bravo charlie".',
    },
  ];
}

const CODEX_FILES: Expected = { 'a.txt': 'alpha gamma\n', 'b.txt': 'bravo charlie\n' };

function codexUserText(item: NonNullable<ResponsesBody['input']>[number]): string | null {
  if (item.role !== 'user') return null;
  if (typeof item.content === 'string') return item.content;
  return (item.content ?? []).map((c) => c.text ?? '').join('\n');
}

const CALL_TYPES = ['function_call', 'custom_tool_call', 'local_shell_call'];

/** The output item of a call: the shell tool codex offers, and apply_patch as it offers it. */
function codexCallItem(body: ResponsesBody, call: CodexCall, n: number, callId: string): Record<string, unknown> {
  const tools = body.tools ?? [];
  const done = { id: `fc_capture_${n}`, call_id: callId, status: 'completed' };
  if (call.shell != null) {
    const shell = tools.find((t) => t.type === 'function' && (t.name === 'exec_command' || t.name === 'shell'));
    const args = shell?.name === 'shell' ? { command: ['bash', '-lc', call.shell] } : { cmd: call.shell };
    return { type: 'function_call', ...done, name: shell?.name ?? 'exec_command', arguments: JSON.stringify(args) };
  }
  const custom = tools.some((t) => t.type === 'custom' && t.name === 'apply_patch');
  return custom
    ? { type: 'custom_tool_call', ...done, id: `ctc_capture_${n}`, name: 'apply_patch', input: call.patch }
    : { type: 'function_call', ...done, name: 'apply_patch', arguments: JSON.stringify({ input: call.patch }) };
}

/**
 * The main conversation's requests (those offering a shell tool) get the turn's next call, or its
 * closing message once every call has been made; a reasoning item with encrypted content comes
 * first when the request includes it. Other requests get a short message.
 */
function codexAnswerer(turns: Turn<CodexCall>[]): Answerer {
  let n = 0;
  return (rec, res) => {
    if (rec.method !== 'POST' || !rec.url.split('?')[0]!.endsWith('/responses')) return answerOther(rec, res, 404, {});
    const body = rec.body as ResponsesBody;
    const id = `resp_capture_${++n}`;
    const message = (text: string) => ({
      type: 'message',
      id: `msg_capture_${n}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text, annotations: [] }],
    });
    const main = (body.tools ?? []).some((t) => t.name === 'exec_command' || t.name === 'shell');
    const input = body.input ?? [];
    const at = main
      ? findTurn(
          input.map(codexUserText),
          turns.map((t) => t.prompt),
        )
      : undefined;
    if (!at) {
      rec.answer = { role: main ? 'main (no prompt of ours found)' : 'background', text: 'Capture session' };
      return writeResponse(res, { id, model: body.model, items: [message('Capture session')] });
    }
    const step = input.slice(at.index + 1).filter((i) => CALL_TYPES.includes(i.type ?? '')).length;
    const turn = turns[at.turn]!;
    const call = turn.calls[step];
    const reasoning = (body.include ?? []).includes('reasoning.encrypted_content')
      ? [
          {
            type: 'reasoning',
            id: `rs_capture_${n}`,
            summary: [{ type: 'summary_text', text: `Turn ${at.turn + 1}, step ${step + 1}.` }],
            encrypted_content: `enc-capture-${n}`,
          },
        ]
      : [];
    const items = [
      ...reasoning,
      call ? codexCallItem(body, call, n, `call_capture_t${at.turn + 1}s${step + 1}`) : message(turn.done),
    ];
    rec.answer = { role: 'main', turn: at.turn + 1, step: step + 1, promptAt: at.index, items };
    writeResponse(res, { id, model: body.model, items });
  };
}

const CODEX_MODEL = 'gpt-5.5';

async function captureCodex(tmp: string): Promise<Outcome> {
  if (!existsSync(REAL_CODEX)) return { name: 'codex', ok: false, lines: [`no codex at ${REAL_CODEX}`] };
  const pkg = join(ROOT, 'node_modules/@openai/codex/package.json');
  const name = `codex-${(JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version}`;
  const lines: string[] = [];
  const dir = mkdtempSync(join(tmp, `${name}-`));
  const home = join(dir, 'home');
  const codexHome = join(home, '.codex');
  const work = join(dir, 'work');
  mkdirSync(codexHome, { recursive: true });
  mkdirSync(work);
  const turns = codexTurns();
  const rec = await startRecorder(codexAnswerer(turns));
  writeFileSync(
    join(codexHome, 'config.toml'),
    [
      `model = "${CODEX_MODEL}"`,
      'model_provider = "standin"',
      '',
      '[model_providers.standin]',
      'name = "standin"',
      `base_url = "${rec.url}/v1"`,
      'env_key = "CODEX_API_KEY"',
      'wire_api = "responses"',
      'supports_websockets = false',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      '',
    ].join('\n'),
  );
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    CODEX_HOME: codexHome,
    CODEX_API_KEY: CODEX_KEY,
  };
  try {
    const base = ['exec', '--skip-git-repo-check', '-s', 'workspace-write', '-C', work];
    const args = turns.map((t, i) => ({ args: [...base, ...(i > 0 ? ['resume', '--last'] : []), t.prompt] }));
    const ran = await drive('codex', args, (a) => run(REAL_CODEX, a, { cwd: work, env }), lines);
    const files = checkFiles(work, CODEX_FILES);
    lines.push(...files.lines);
    const out = join(OUT, `${name}-session.jsonl`);
    writeSession(out, rec.seen, replacementsFor(dir, CODEX_KEY));
    writeSession(join(dir, 'session-whole.jsonl'), rec.seen, replacementsFor(dir, CODEX_KEY), true);
    lines.push(`${rec.seen.length} requests → ${out.slice(ROOT.length)}`, ...roles(rec.seen));
    return { name, ok: ran && files.ok, lines };
  } finally {
    await rec.close();
  }
}

// --- main ------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { only: { type: 'string' }, keep: { type: 'boolean' }, 'essential-only': { type: 'boolean' } },
  });
  mkdirSync(OUT, { recursive: true });
  const tmp = mkdtempSync(join(tmpdir(), 'olp-capture-'));
  const outcomes: Outcome[] = [];
  try {
    if (values.only !== 'codex')
      for (const bin of [CLAUDE_BASELINE, CLAUDE_CURRENT])
        outcomes.push(await captureClaude(bin, tmp, !!values['essential-only']));
    if (values.only !== 'claude') outcomes.push(await captureCodex(tmp));
  } finally {
    if (values.keep) console.log(`kept ${tmp}`);
    else rmSync(tmp, { recursive: true, force: true });
  }
  for (const o of outcomes) console.log(`\n${o.ok ? 'OK  ' : 'FAIL'} ${o.name}\n${o.lines.join('\n')}`);
  process.exitCode = outcomes.every((o) => o.ok) ? 0 : 1;
}

await main();
