// Agent conversations as the agents really send them (test/fixtures/reference/clients/): Claude
// Code's own shapes stay on one live CLI. Its first user message carries a system-reminder block
// before the prompt and is followed by a message of role `system`; it sends thinking blocks back,
// an Edit call back with `replace_all: false` added, and may put its next words (or a reminder)
// in the same message as the tool results.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { isAlive, recordedPids, waitGone } from '../support/procs.js';
import { waitFor } from '../support/wait.js';

type Block = Record<string, unknown>;
type Message = { role: 'user' | 'assistant' | 'system'; content: string | Block[] };

const TOOLS = [
  {
    name: 'Write',
    description: 'Writes a file',
    input_schema: { type: 'object', properties: { file_path: { type: 'string' }, content: { type: 'string' } } },
  },
  {
    name: 'Edit',
    description: 'Edits a file',
    input_schema: {
      type: 'object',
      properties: {
        file_path: { type: 'string' },
        old_string: { type: 'string' },
        new_string: { type: 'string' },
        replace_all: { type: 'boolean', default: false },
      },
    },
  },
];
const EDIT = { file_path: 'a.txt', old_string: 'beta', new_string: 'gamma' };
const calling = (call: { name: string; arguments: Record<string, unknown> }) =>
  `Now edit a.txt. [[fake-tools:${JSON.stringify([call])}]]`;

let t: TestDaemon;
before(async () => {
  t = await startTestDaemon({ config: { workers: true, prestart: false } });
});
after(async () => {
  await t.close();
});

async function send(
  messages: Message[],
  o: { daemon?: TestDaemon; headers?: Record<string, string>; body?: Record<string, unknown> } = {},
): Promise<{ content: Block[]; stop_reason: string }> {
  const d = o.daemon ?? t;
  const res = await fetch(`${d.url}/v1/messages?beta=true`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': d.token,
      'anthropic-version': '2023-06-01',
      ...o.headers,
    },
    body: JSON.stringify({
      model: 'claude-sonnet-4-5',
      max_tokens: 32000,
      system: [{ type: 'text', text: 'You are Claude Code.', cache_control: { type: 'ephemeral' } }],
      tools: TOOLS,
      thinking: { type: 'adaptive' },
      messages,
      ...o.body,
    }),
  });
  const body = (await res.json()) as { content: Block[]; stop_reason: string };
  assert.equal(res.status, 200, JSON.stringify(body));
  return body;
}

const requests = (d = t) => d.logs.filter((l) => l.event === 'request' && l.path === '/v1/messages');
const runModes = (d = t) => requests(d).map((l) => String(l.run ?? '-'));
const sessionModes = (d = t) => requests(d).map((l) => String(l.session ?? '-'));

describe("Claude Code's shapes", () => {
  it('its tool steps and next user turn stay on the one claude, parked then warm', async () => {
    const messages: Message[] = [
      {
        role: 'user',
        content: [
          { type: 'text', text: '<system-reminder>\nToday is a Sunday.\n</system-reminder>' },
          { type: 'text', text: calling({ name: 'Edit', arguments: EDIT }), cache_control: { type: 'ephemeral' } },
        ],
      },
      { role: 'system', content: '# Environment\nThe skills are listed here.' },
    ];
    const first = await send(messages);
    assert.equal(first.stop_reason, 'tool_use');
    const use = first.content.find((b) => b.type === 'tool_use')!;
    assert.deepEqual(use.input, EDIT);
    // Sent back as Claude Code does: after thinking, Edit's input re-serialised with its default,
    // and a reminder in the message of the result.
    messages.push(
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: '', signature: 'sig-1' },
          { ...use, input: { replace_all: false, ...EDIT } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: use.id, content: 'The file a.txt has been updated.' },
          { type: 'text', text: '<system-reminder>\nThe user opened a.txt.\n</system-reminder>' },
        ],
      },
    );
    const second = await send(messages);
    assert.equal(second.stop_reason, 'end_turn');
    const said = second.content.find((b) => b.type === 'text')!.text as string;
    assert.equal(
      said,
      'echo: The file a.txt has been updated.\n\n<system-reminder>\nThe user opened a.txt.\n</system-reminder>',
    );
    messages.push(
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: '', signature: 'sig-2' },
          { type: 'text', text: said },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'Thanks. What is in a.txt now?' }] },
    );
    const third = await send(messages);
    assert.equal(third.stop_reason, 'end_turn');
    await waitFor(() => runModes().length === 3);
    assert.deepEqual(runModes(), ['cold', 'parked', 'warm']);
    assert.equal(recordedPids(t.recordDir).runs.length, 1, 'one claude for the whole conversation');
  });
});

describe('a conversation taken for a new one', () => {
  it('the log says where it parted from the closest conversation a slot holds, and why', async () => {
    const d = await startTestDaemon({ config: { workers: true, prestart: false } });
    try {
      const messages: Message[] = [{ role: 'user', content: 'Say hello.' }];
      const first = await send(messages, { daemon: d });
      // The client sends the reply back changed: not the conversation the CLI had.
      const changed = first.content.map((b) => (b.type === 'text' ? { ...b, text: `${b.text} (edited)` } : b));
      await send([...messages, { role: 'assistant', content: changed }, { role: 'user', content: 'And?' }], {
        daemon: d,
      });
      await waitFor(() => requests(d).length === 2);
      const line = requests(d)[1]!;
      assert.equal(line.run, 'cold');
      assert.equal(line.divergedAt, 'turns[1]');
      assert.equal(line.diverged, 'its assistant turn differs');
    } finally {
      await d.close();
    }
  });
});

describe("a system prompt's drift", () => {
  const system = (line: string) => [
    { type: 'text', text: [...Array.from({ length: 40 }, (_, i) => `Rule ${i} of the house.`), line].join('\n') },
  ];
  it('a few lines changed go on warm with the prompt the CLI has; a new prompt starts the CLI afresh', async () => {
    const d = await startTestDaemon({ config: { workers: true, prestart: false } });
    try {
      const messages: Message[] = [{ role: 'user', content: 'Say hello.' }];
      const first = await send(messages, { daemon: d, body: { system: system('The model has a 1M context.') } });
      messages.push({ role: 'assistant', content: first.content }, { role: 'user', content: 'And again.' });
      const second = await send(messages, { daemon: d, body: { system: system('The model has its context.') } });
      messages.push({ role: 'assistant', content: second.content }, { role: 'user', content: 'Once more.' });
      await send(messages, { daemon: d, body: { system: [{ type: 'text', text: 'You are a pirate.' }] } });
      await waitFor(() => requests(d).length === 3);
      assert.deepEqual(runModes(d), ['cold', 'warm', 'cold']);
      assert.equal(requests(d)[2]!.rotation, 'system_changed');
    } finally {
      await d.close();
    }
  });
});

describe('requests beside the conversation', () => {
  it("a background request (2.1.197's session title) runs once, on its own: the conversation's claude goes on", async () => {
    const d = await startTestDaemon({ config: { workers: true, prestart: false } });
    try {
      const messages: Message[] = [{ role: 'user', content: 'Say hello.' }];
      const first = await send(messages, { daemon: d });
      messages.push({ role: 'assistant', content: first.content }, { role: 'user', content: 'And again.' });
      // What Claude Code 2.1.197 sends for the title: a small model, no tools, one user message.
      const title = await send([{ role: 'user', content: '<session>\nSay hello.\n</session>\n\nWrite the title.' }], {
        daemon: d,
        body: { model: 'claude-haiku-4-5-20251001', tools: [], thinking: { type: 'disabled' } },
      });
      assert.equal(title.stop_reason, 'end_turn');
      await send(messages, { daemon: d });
      await waitFor(() => requests(d).length === 3);
      assert.deepEqual(runModes(d), ['cold', 'cold', 'warm']);
      assert.equal(sessionModes(d)[1], 'ephemeral', 'the title took no session slot');
      const [main, once] = recordedPids(d.recordDir).runs;
      assert.equal(recordedPids(d.recordDir).runs.length, 2);
      assert.deepEqual(await waitGone([once!]), [], 'the one-shot claude is gone');
      assert.ok(isAlive(main!), "the conversation's claude is still there");
    } finally {
      await d.close();
    }
  });

  it("a sub-agent's new conversation takes no slot whose conversation goes on: with none free it runs on its own", async () => {
    const d = await startTestDaemon({ config: { workers: true, prestart: false, sessionPool: 1, maxSessionSlots: 1 } });
    try {
      const messages: Message[] = [{ role: 'user', content: 'Say hello.' }];
      const first = await send(messages, { daemon: d });
      messages.push({ role: 'assistant', content: first.content }, { role: 'user', content: 'And again.' });
      const agent = { 'x-claude-code-agent-id': 'agent-1', 'x-claude-code-parent-agent-id': 'main' };
      await send([{ role: 'user', content: 'Find the tests.' }], { daemon: d, headers: agent });
      await send(messages, { daemon: d });
      await waitFor(() => requests(d).length === 3);
      assert.deepEqual(runModes(d), ['cold', 'cold', 'warm'], 'the main conversation goes on warm');
      assert.equal(sessionModes(d)[1], 'ephemeral');
      // Without the header the same request is a new conversation, and takes the one slot.
      await send([{ role: 'user', content: 'Find the tests.' }], { daemon: d });
      await waitFor(() => requests(d).length === 4);
      assert.notEqual(sessionModes(d)[3], 'ephemeral');
    } finally {
      await d.close();
    }
  });
});

describe("codex's sub-agents", () => {
  it('a thread naming its parent (x-codex-parent-thread-id) takes no slot whose conversation goes on', async () => {
    const d = await startTestDaemon({ config: { workers: true, prestart: false, sessionPool: 1, maxSessionSlots: 1 } });
    try {
      const post = (input: unknown[], headers: Record<string, string> = {}) =>
        fetch(`${d.baseURL}/responses`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${d.token}`, ...headers },
          body: JSON.stringify({ model: 'sonnet', input, store: false }),
        }).then(async (r) => ({
          status: r.status,
          body: (await r.json()) as { output_text?: string; output: unknown[] },
        }));
      const say = (text: string) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
      const first = await post([say('Say hello.')]);
      assert.equal(first.status, 200);
      const sub = await post([say('Look at the tests.')], {
        'x-codex-parent-thread-id': 'thread-1',
        'x-openai-subagent': 'collab',
      });
      assert.equal(sub.status, 200);
      const reply = first.body.output.find((o) => (o as { type: string }).type === 'message');
      await post([say('Say hello.'), reply, say('And again.')]);
      const lines = () => d.logs.filter((l) => l.event === 'request' && l.path === '/v1/responses');
      await waitFor(() => lines().length === 3);
      assert.deepEqual(
        lines().map((l) => [l.run, l.session]),
        [
          ['cold', 'fresh'],
          ['cold', 'ephemeral'],
          ['warm', 'resumed'],
        ],
        JSON.stringify(lines()),
      );
    } finally {
      await d.close();
    }
  });
});

describe('a compacted conversation', () => {
  it('starts a new conversation once, from the summary, then goes on warm', async () => {
    const d = await startTestDaemon({ config: { workers: true, prestart: false } });
    try {
      const messages: Message[] = [{ role: 'user', content: 'One.' }];
      const turn = async () => {
        const r = await send(messages, { daemon: d });
        messages.push({ role: 'assistant', content: r.content });
      };
      await turn();
      messages.push({ role: 'user', content: 'Two.' });
      await turn();
      // What Claude Code sends after it compacts: the summary in place of the history.
      messages.splice(0, messages.length, {
        role: 'user',
        content: 'This session is being continued from a previous conversation. Summary: one, then two.\n\nThree.',
      });
      await turn();
      messages.push({ role: 'user', content: 'Four.' });
      await turn();
      await waitFor(() => requests(d).length === 4);
      assert.deepEqual(runModes(d), ['cold', 'warm', 'cold', 'warm']);
      assert.equal(requests(d)[2]!.divergedAt, undefined, 'nothing in common with the conversation it summed up');
    } finally {
      await d.close();
    }
  });
});
