// A body over the limit gets its 413, in the route's envelope, where Node's clients see it. fetch
// (undici, which the openai client and the Anthropic SDK use) is still writing the body when olp
// answers; if olp then resets the connection, the client's next write fails (EPIPE, "other side
// closed") and the answer is lost. olp runs as its own process here (`olp serve`): in one
// process, the client's writes and the server's answer take turns on one event loop, and the
// reset that loses the answer does not happen.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { FAKE_CLAUDE, OLP_BIN } from '../support/paths.js';

const base = mkdtempSync(join(tmpdir(), 'olp-body-limit-'));
/** olp's default --body-limit (10 MiB), and a body a little over it. */
const LIMIT = 10 * 1024 * 1024;
const OVER = 'x'.repeat(11 * 1024 * 1024);
/** The reset is a race the client loses most of the time, not always: each client tries a few times. */
const TRIES = 3;

let child: ChildProcess;
let url: string;
let token: string;
before(async () => {
  const stateDir = join(base, 'state');
  const env = { PATH: process.env.PATH ?? '', HOME: base };
  const added = spawnSync(process.execPath, [OLP_BIN, 'keys', 'add', 'me', '--state-dir', stateDir], {
    encoding: 'utf8',
    env,
  });
  token = added.stdout.trim().split('\n').at(-1) ?? '';
  child = spawn(
    process.execPath,
    [OLP_BIN, 'serve', '--state-dir', stateDir, '--port', '0', '--claude-bin', FAKE_CLAUDE, '--shutdown-grace', '1'],
    { env, stdio: ['ignore', 'pipe', 'ignore'] },
  );
  const v1 = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', () => reject(new Error('olp exited before listening')));
  });
  url = v1.replace(/\/v1$/, '');
});
after(async () => {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
  rmSync(base, { recursive: true, force: true });
});

const chatBody = () => JSON.stringify({ model: 'sonnet', messages: [{ role: 'user', content: OVER }] });
const messagesBody = () =>
  JSON.stringify({ model: 'sonnet', max_tokens: 64, messages: [{ role: 'user', content: OVER }] });

/** POST with fetch; a failure to get any answer is returned as its cause's code, to be asserted on. */
async function post(path: string, body: string | ReadableStream<Uint8Array>, headers: Record<string, string> = {}) {
  try {
    const res = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      body,
      duplex: 'half',
    } as RequestInit);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    return { status: 0, body: { failed: cause?.code ?? cause?.message ?? String(e) } };
  }
}

const OPENAI_413 = {
  error: {
    message: `The request body is larger than the limit of ${LIMIT} bytes.`,
    type: 'invalid_request_error',
    param: null,
    code: 'request_too_large',
  },
};
const ANTHROPIC_413 = {
  type: 'error',
  error: { type: 'request_too_large', message: `The request body is larger than the limit of ${LIMIT} bytes.` },
};

describe('a body over the limit: Node clients see the 413', () => {
  it('fetch, Content-Length: 413 in the OpenAI envelope on chat, responses', async () => {
    for (const path of ['/v1/chat/completions', '/v1/responses'])
      for (let i = 0; i < TRIES; i++) {
        const a = await post(path, chatBody());
        assert.deepEqual(a, { status: 413, body: OPENAI_413 }, `${path}, try ${i + 1}`);
      }
  });

  it("fetch, Content-Length: 413 in Anthropic's envelope on /v1/messages and count_tokens", async () => {
    for (const path of ['/v1/messages', '/v1/messages/count_tokens'])
      for (let i = 0; i < TRIES; i++) {
        const a = await post(path, messagesBody(), { 'anthropic-version': '2023-06-01' });
        assert.deepEqual(a, { status: 413, body: ANTHROPIC_413 }, `${path}, try ${i + 1}`);
      }
  });

  it('fetch, a chunked body (a stream, no Content-Length): 413', async () => {
    const bytes = Buffer.from(chatBody());
    for (let i = 0; i < TRIES; i++) {
      const stream = new ReadableStream<Uint8Array>({
        start(c) {
          for (let at = 0; at < bytes.length; at += 64 * 1024) c.enqueue(bytes.subarray(at, at + 64 * 1024));
          c.close();
        },
      });
      const a = await post('/v1/chat/completions', stream);
      assert.deepEqual(a, { status: 413, body: OPENAI_413 }, `try ${i + 1}`);
    }
  });

  it('the openai client: an APIError with status 413 and code request_too_large', async () => {
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: token, maxRetries: 0 });
    for (let i = 0; i < TRIES; i++)
      await assert.rejects(
        client.chat.completions.create({ model: 'sonnet', messages: [{ role: 'user', content: OVER }] }),
        (e: unknown) => {
          assert.ok(e instanceof OpenAI.APIError, String(e));
          assert.equal(e.status, 413, String(e));
          assert.equal(e.code, 'request_too_large');
          assert.equal(e.type, 'invalid_request_error');
          return true;
        },
      );
  });

  it("the Anthropic SDK: an APIError with status 413 and Anthropic's request_too_large", async () => {
    const client = new Anthropic({ baseURL: url, apiKey: token, maxRetries: 0 });
    for (let i = 0; i < TRIES; i++)
      await assert.rejects(
        client.messages.create({ model: 'sonnet', max_tokens: 64, messages: [{ role: 'user', content: OVER }] }),
        (e: unknown) => {
          assert.ok(e instanceof Anthropic.APIError, String(e));
          assert.equal(e.status, 413, String(e));
          assert.deepEqual(e.error, ANTHROPIC_413);
          return true;
        },
      );
  });

  it('olp still answers a small request afterwards', async () => {
    const a = await post(
      '/v1/chat/completions',
      JSON.stringify({ model: 'sonnet', messages: [{ role: 'user', content: 'hi' }] }),
    );
    assert.equal(a.status, 200, JSON.stringify(a.body));
  });
});
