// One refresher per login file on the real `codex` binary (pinned devDependency, 0.171): a key bound
// to a ChatGPT login whose access token expires in 3 minutes (inside codex's 5-minute refresh
// window) sends 5 requests at once. codex refreshes outside any shared lock, against a loopback
// stand-in of OpenAI's token endpoint whose refresh tokens are single-use; the model API is the
// Responses stand-in, reached with the login's access token (a provider with requires_openai_auth).
// Through olp one run refreshes and the others start on its tokens; without olp's gate the same
// burst spends the same refresh token more than once.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { loginPaths, writeSecret } from '../../src/logins/index.js';
import {
  chatgptAuthJson,
  codexChatgptConfig,
  codexChatgptEnv,
  type Refresh,
  startChatgptStandIn,
} from '../support/chatgpt-stand-in.js';
import { startTestDaemon } from '../support/daemon.js';
import { REAL_CODEX } from '../support/paths.js';
import { assertUnderstood } from '../support/real.js';
import { startResponsesStandIn, type ResponsesStandIn } from '../support/responses-stand-in.js';

const present = existsSync(REAL_CODEX);
let api: ResponsesStandIn;

before(async () => {
  if (present) api = await startResponsesStandIn();
});
after(async () => {
  await api?.close();
});

/** codex's model provider for the Responses stand-in, authenticated with the ChatGPT login's access token. */
function chatgptProvider(url: string): string[] {
  return [
    'model_provider="standin"',
    `model_providers.standin={name="standin",base_url="${url}/v1",requires_openai_auth=true,wire_api="responses",supports_websockets=false,request_max_retries=0,stream_max_retries=0}`,
  ];
}

interface Burst {
  answers: { status: number; text: string }[];
  refreshes: Refresh[];
  /** The login's auth.json afterwards. */
  auth: { tokens: { refresh_token: string; access_token: string } };
  ms: number;
}

/**
 * A fresh olp (with or without its refresh gate) whose key `carol` is bound to a ChatGPT login
 * expiring in 3 minutes; 5 requests of that key at once.
 */
async function burst(gate: boolean): Promise<Burst> {
  // The token endpoint's time lets every run that starts at once read the old token.
  const tokens = await startChatgptStandIn({ delayMs: 1000 });
  const t = await startTestDaemon({
    config: {
      codexBin: REAL_CODEX,
      timeout: 60,
      idleTimeout: 30,
      // All five at once (the default is 2 per core).
      maxConcurrency: 5,
      codexConfig: [...chatgptProvider(api.url), ...codexChatgptConfig(tokens.url)],
    },
    codexEnv: codexChatgptEnv(tokens.url),
    ...(gate ? {} : { refreshGate: false as const }),
  });
  try {
    const file = loginPaths(t.stateDir, 'carol').codexAuth;
    writeSecret(file, chatgptAuthJson(1, 180));
    t.daemon.store.logins.set('carol', 'codex', 'chatgpt');
    const key = t.daemon.store.keys.add('carol', 'member', {}, 'carol').token;
    const started = performance.now();
    const answers = await Promise.all(
      [1, 2, 3, 4, 5].map(async (i) => {
        const res = await fetch(`${t.baseURL}/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'codex', messages: [{ role: 'user', content: `request ${i}` }] }),
        });
        const body = (await res.json()) as { choices?: { message: { content: string } }[]; error?: unknown };
        return { status: res.status, text: body.choices?.[0]?.message.content ?? JSON.stringify(body.error) };
      }),
    );
    const ms = performance.now() - started;
    return {
      answers,
      refreshes: [...tokens.refreshes],
      auth: JSON.parse(readFileSync(file, 'utf8')) as Burst['auth'],
      ms,
    };
  } finally {
    const logs = t.logs;
    await t.close();
    await tokens.close();
    assertUnderstood(logs);
  }
}

const count = (b: Burst, outcome: Refresh['outcome']) => b.refreshes.filter((r) => r.outcome === outcome).length;

describe('real codex with a ChatGPT login about to expire', { skip: !present && `no codex at ${REAL_CODEX}` }, () => {
  it('5 requests at once: one run refreshes, none spends a used refresh token, all answer, the login file holds the new token', async () => {
    const b = await burst(true);
    assert.deepEqual(
      b.answers.map((a) => a.status),
      [200, 200, 200, 200, 200],
      JSON.stringify(b.answers),
    );
    assert.deepEqual(
      b.answers.map((a) => a.text),
      [1, 2, 3, 4, 5].map((i) => `responses stand-in heard: request ${i}`),
    );
    assert.deepEqual(b.refreshes, [{ refreshToken: 'rt-1', outcome: 'rotated' }], 'exactly one refresh, of rt-1');
    assert.equal(b.auth.tokens.refresh_token, 'rt-2', "codex wrote the rotated token to the login's file");
    console.log(
      `codex ChatGPT login, 5 at once through olp: ${b.refreshes.length} refresh request(s), ${count(b, 'reused')} reused, statuses ${b.answers.map((a) => a.status).join(',')}, ${Math.round(b.ms)} ms`,
    );
  });

  it('the same burst without olp’s gate: codex spends the same refresh token more than once', async () => {
    const b = await burst(false);
    console.log(
      `codex ChatGPT login, 5 at once without the gate: ${b.refreshes.length} refresh requests (${count(b, 'rotated')} rotated, ${count(b, 'reused')} reused), statuses ${b.answers.map((a) => a.status).join(',')}, ${Math.round(b.ms)} ms`,
    );
    assert.ok(b.refreshes.length > 1, `more than one refresh: ${JSON.stringify(b.refreshes)}`);
    assert.ok(count(b, 'reused') >= 1, 'a used refresh token was sent again');
  });
});
