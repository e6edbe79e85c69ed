// The real `claude` binaries (the pinned baseline and the current release) as CLIENTS of olp's
// Anthropic Messages endpoint: `claude -p` with ANTHROPIC_BASE_URL pointed at a real listening olp
// on the fake claude, as a user would point Claude Code at olp. A loopback recorder between them
// keeps every request and answer, so the wire (path, credential, the tool_result of the second
// request) is checked as well as what Claude Code prints and does.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { saveClaudeToken } from '../../src/logins/index.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { listenLoopback } from '../support/listen.js';
import { CLAUDE_BASELINE, CLAUDE_CURRENT } from '../support/paths.js';

interface Exchange {
  method: string;
  /** Path with its query (Claude Code sends `/v1/messages?beta=true`). */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
  /** The answer as sent (SSE text for a stream). */
  answer: string;
}

/** A loopback pass-through to olp that records each request and its answer, streaming both ways. */
async function startRecorder(target: string): Promise<{ url: string; seen: Exchange[]; close(): Promise<void> }> {
  const seen: Exchange[] = [];
  const to = new URL(target);
  const server = createServer((req, res) => {
    const x: Exchange = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body: '',
      status: 0,
      answer: '',
    };
    seen.push(x);
    const up = request(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
      (r) => {
        x.status = r.statusCode ?? 0;
        res.writeHead(x.status, r.headers);
        r.on('data', (d: Buffer) => {
          x.answer += d.toString('utf8');
          res.write(d);
        });
        r.on('end', () => res.end());
      },
    );
    up.on('error', () => res.destroy());
    req.on('data', (d: Buffer) => {
      x.body += d.toString('utf8');
      up.write(d);
    });
    req.on('end', () => up.end());
  });
  const { url, close } = await listenLoopback(server);
  return { url, seen, close };
}

/** The SSE events of a recorded answer. */
function events(answer: string): { type: string; [k: string]: unknown }[] {
  return answer
    .split('\n\n')
    .map((e) => /^data: (.*)$/m.exec(e)?.[1])
    .filter((d): d is string => !!d)
    .map((d) => JSON.parse(d) as { type: string });
}

type Block = { type: string; id?: string; name?: string; tool_use_id?: string; content?: unknown; is_error?: boolean };

// One generation a file, so the two run side by side: this file the baseline, current/ the current
// release (it sets OLP_TEST_CLAUDE_CLIENT and imports this one).
const CLIENTS = [
  { name: 'baseline', bin: CLAUDE_BASELINE },
  { name: 'current', bin: CLAUDE_CURRENT },
].filter((c) => c.name === (process.env.OLP_TEST_CLAUDE_CLIENT ?? 'baseline'));

/** The CLI olp answers with: claude, or codex for every claude-* id ("Claude Code on a ChatGPT login"). */
const BACKENDS = [
  { cli: 'claude', config: {}, hello: /Hello from fake claude\. You said:/ },
  { cli: 'codex', config: { anthropicModels: { 'claude-*': 'codex' } }, hello: /Hello from fake codex\. You said:/ },
];

for (const client of CLIENTS)
  for (const backend of BACKENDS) {
    const present = existsSync(client.bin);
    describe(`Claude Code (${client.name}) with olp as its API, on the ${backend.cli} CLI`, {
      skip: !present ? `no claude at ${client.bin}` : false,
    }, () => {
      let t: TestDaemon;
      let rec: Awaited<ReturnType<typeof startRecorder>>;
      let scratch: string;
      before(async () => {
        t = await startTestDaemon({ config: backend.config });
        rec = await startRecorder(t.url);
        scratch = mkdtempSync(join(tmpdir(), 'olp-cc-client-'));
      });
      after(async () => {
        await rec?.close();
        await t?.close();
        if (scratch) rmSync(scratch, { recursive: true, force: true });
      });

      /**
       * `claude -p <prompt>` in a throwaway home and working directory, with the environment olp's
       * own claude backend uses to keep it offline (no updater, telemetry, error reports or other
       * non-essential traffic) and no retries, so a failure shows at once.
       */
      function claude(
        prompt: string,
        o: { args?: string[]; auth?: 'token' | 'key'; token?: string; retries?: boolean } = {},
      ): Promise<{ status: number | null; stdout: string; stderr: string; cwd: string }> {
        const home = mkdtempSync(join(scratch, 'home-'));
        const cwd = mkdtempSync(join(scratch, 'work-'));
        mkdirSync(join(home, 'tmp'));
        const env: Record<string, string> = {
          PATH: process.env.PATH!,
          HOME: home,
          TMPDIR: join(home, 'tmp'),
          ANTHROPIC_BASE_URL: rec.url,
          ...(o.auth === 'key'
            ? { ANTHROPIC_API_KEY: o.token ?? t.token }
            : { ANTHROPIC_AUTH_TOKEN: o.token ?? t.token }),
          DISABLE_AUTOUPDATER: '1',
          DISABLE_TELEMETRY: '1',
          DISABLE_ERROR_REPORTING: '1',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          ...(o.retries ? {} : { CLAUDE_CODE_MAX_RETRIES: '0' }),
        };
        return new Promise((resolve) => {
          const c = spawn(client.bin, ['-p', prompt, ...(o.args ?? [])], {
            cwd,
            env,
            stdio: ['ignore', 'pipe', 'pipe'],
            timeout: 90_000,
          });
          let stdout = '';
          let stderr = '';
          c.stdout!.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
          c.stderr!.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
          c.on('close', (status) => resolve({ status, stdout, stderr, cwd }));
        });
      }

      /** The Messages requests recorded since `from`. */
      const messages = (from: number) =>
        rec.seen.slice(from).filter((x) => x.method === 'POST' && x.url.split('?')[0] === '/v1/messages');

      it('claude -p "hello": a reply, over a streamed POST /v1/messages with its Bearer token', async () => {
        const from = rec.seen.length;
        const r = await claude('hello');
        assert.equal(r.status, 0, r.stderr || r.stdout);
        assert.match(r.stdout, backend.hello);
        const sent = messages(from);
        assert.equal(sent.length, 1, 'one request: a streamed answer needs no non-streaming repeat');
        assert.equal(sent[0]!.headers.authorization, `Bearer ${t.token}`);
        assert.equal(sent[0]!.status, 200);
        assert.equal(JSON.parse(sent[0]!.body).stream, true);
        const types = events(sent[0]!.answer).map((e) => e.type);
        assert.equal(types.filter((e) => e !== 'ping')[0], 'message_start');
        assert.equal(types.at(-1), 'message_stop');
      });

      it('a member whose own login its provider refused: one request, not retried, and the member reads who renews it', {
        skip: backend.cli !== 'claude' ? 'the fake claude refuses the token' : false,
      }, async () => {
        saveClaudeToken(t.stateDir, 'bob', `sk-ant-oat01-revoked-${'x'.repeat(20)}`);
        t.daemon.store.logins.set('bob', 'claude', 'setup-token');
        const bob = t.daemon.store.keys.add(`bob-${client.name}`, 'member', {}, 'bob').token;
        const from = rec.seen.length;
        // Claude Code's own retries left on: a 503 with x-should-retry: false must not be retried.
        const r = await claude('hello from bob', { token: bob, retries: true });
        assert.notEqual(r.status, 0);
        assert.match(r.stdout + r.stderr, /Your claude login 'bob' was refused by Anthropic/);
        const sent = messages(from);
        assert.equal(sent.length, 1, sent.map((x) => x.status).join(' '));
        assert.equal(sent[0]!.status, 503);
      });

      it('ANTHROPIC_API_KEY: the key arrives as x-api-key and is accepted', async () => {
        const from = rec.seen.length;
        const r = await claude('hello by key', { auth: 'key' });
        assert.equal(r.status, 0, r.stderr || r.stdout);
        assert.match(r.stdout, backend.hello);
        const sent = messages(from);
        assert.ok(sent.length >= 1);
        assert.equal(sent[0]!.headers['x-api-key'], t.token);
        assert.equal(sent[0]!.headers.authorization, undefined);
      });

      it('a tool round trip: Claude Code runs the model’s Bash call and sends its tool_result; the model answers it', async () => {
        const from = rec.seen.length;
        const call = [{ name: 'Bash', arguments: { command: 'echo from-bash | tee bash-out.txt' } }];
        const r = await claude(`Run it. [[fake-tools:${JSON.stringify(call)}]]`, { args: ['--allowedTools', 'Bash'] });
        assert.equal(r.status, 0, r.stderr || r.stdout);
        assert.equal(readFileSync(join(r.cwd, 'bash-out.txt'), 'utf8'), 'from-bash\n', 'Claude Code ran the command');
        assert.match(r.stdout, /echo: .*from-bash/);

        const sent = messages(from);
        assert.ok(sent.length >= 2, `two requests at least, saw ${sent.length}`);
        // The first answer: a tool_use for Claude Code's own Bash tool, the turn stopping for it.
        const first = events(sent[0]!.answer);
        const use = first.find(
          (e) => e.type === 'content_block_start' && (e.content_block as Block).type === 'tool_use',
        )?.content_block as Block | undefined;
        assert.ok(use, 'the first answer calls a tool');
        assert.equal(use.name, 'Bash');
        assert.match(use.id!, /^[A-Za-z0-9_-]+$/, 'an id Claude Code accepts');
        const stop = first.find((e) => e.type === 'message_delta') as { delta: { stop_reason: string } } | undefined;
        assert.equal(stop?.delta.stop_reason, 'tool_use');
        // The second request re-sends the history and ends with the tool_result of that call.
        const second = JSON.parse(sent[1]!.body) as { messages: { role: string; content: string | Block[] }[] };
        const last = second.messages.at(-1)!;
        assert.equal(last.role, 'user');
        const result = (last.content as Block[]).find((b) => b.type === 'tool_result');
        assert.ok(result, 'the second request carries a tool_result');
        assert.equal(result.tool_use_id, use.id);
        assert.notEqual(result.is_error, true);
        assert.match(JSON.stringify(result.content), /from-bash/);
        const assistant = second.messages.filter((m) => m.role === 'assistant').at(-1)!;
        assert.ok(
          (assistant.content as Block[]).some((b) => b.type === 'tool_use' && b.id === use.id),
          'the history holds the call',
        );
        assert.equal(sent[1]!.status, 200);
      });

      it('parallel calls: both run, and each result is matched to its call by id (Claude Code sends them in completion order)', async () => {
        const from = rec.seen.length;
        const calls = [
          { name: 'Bash', arguments: { command: 'sleep 1; echo first-call' } },
          { name: 'Bash', arguments: { command: 'echo second-call' } },
        ];
        const r = await claude(`Run both. [[fake-tools:${JSON.stringify(calls)}]]`, {
          args: ['--allowedTools', 'Bash'],
        });
        assert.equal(r.status, 0, r.stderr || r.stdout);
        // The fake model echoes the results in its calls' order, whatever order they came back in.
        assert.match(r.stdout, /echo: .*first-call.* \| .*second-call/);
        const sent = messages(from);
        const uses = events(sent[0]!.answer)
          .filter((e) => e.type === 'content_block_start' && (e.content_block as Block).type === 'tool_use')
          .map((e) => e.content_block as Block);
        assert.equal(uses.length, 2);
        const second = JSON.parse(sent[1]!.body) as { messages: { role: string; content: Block[] }[] };
        const results = second.messages.at(-1)!.content.filter((b) => b.type === 'tool_result');
        const byId = new Map(results.map((b) => [b.tool_use_id, JSON.stringify(b.content)]));
        assert.match(byId.get(uses[0]!.id) ?? '', /first-call/);
        assert.match(byId.get(uses[1]!.id) ?? '', /second-call/);
      });
    });
  }
