// Each wire format's request mapped into the core's messages (src/core), one realistic request each,
// and the stored responses of earlier versions (chat-shaped messages) read as the core's.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Message } from '../../src/core/index.js';
import { toMessages } from '../../src/wire/responses/input.js';
import { planParked, type ParkedTurns, type ToolParkedTurn } from '../../src/run/index.js';
import { openStore } from '../../src/store/index.js';
import { toPrompt } from '../../src/transcript/index.js';
import {
  fromStoredMessages,
  parseChatRequest,
  parseMessagesRequest,
  parseResponsesRequest,
  toCoreMessages,
} from '../../src/wire/index.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const PNG_URL = `data:image/png;base64,${PNG}`;

/** The conversation the three requests below all carry, as the transcript renders it. */
const RENDERED = [
  'Below is the conversation so far between the user and you, the assistant, each turn inside its own tag. ' +
    'Write only your next reply to the last user turn, as plain text, without any tags.',
  '',
  '<conversation>',
  '<user>\nWhat is this?\n</user>',
  '',
  '<assistant>\nLet me check.\n<tool_call id="call_1" name="lookup">\n{"city":"Oslo","day":1}\n</tool_call>\n' +
    '</assistant>',
  '',
  '<tool_result id="call_1" name="lookup">\nrain\n</tool_result>',
  '',
  '<user>\nAnd tomorrow?\n</user>',
  '</conversation>',
].join('\n');

describe('the core messages of each wire format', () => {
  it('chat: system and developer as system text, a named user with an image, calls, results by id and by name', () => {
    const chat = parseChatRequest({
      model: 'm',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'developer', content: [{ type: 'text', text: 'use metric' }] },
        {
          role: 'user',
          name: 'bob',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: PNG_URL } },
            { type: 'input_audio', input_audio: { data: 'x', format: 'wav' } },
          ],
        },
        {
          role: 'assistant',
          content: 'Let me check.',
          refusal: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"day":1}' } }],
          function_call: { name: 'log', arguments: '{}' },
        },
        {
          role: 'tool',
          tool_call_id: 'call_1',
          content: [
            { type: 'text', text: 'rain' },
            { type: 'text', text: '4 °C' },
          ],
        },
        { role: 'function', name: 'log', content: null },
        { role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot.' }], refusal: 'Not that.' },
      ],
    });
    assert.deepEqual(toCoreMessages(chat.messages), [
      { role: 'system', parts: [{ type: 'text', text: 'be brief' }] },
      { role: 'system', parts: [{ type: 'text', text: 'use metric' }] },
      {
        role: 'user',
        name: 'bob',
        parts: [
          { type: 'text', text: 'What is this?' },
          { type: 'image', url: PNG_URL, at: 'messages.2.content.1' },
          { type: 'other', kind: 'input_audio', at: 'messages.2.content.2' },
        ],
      },
      {
        role: 'assistant',
        parts: [
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_call', id: 'call_1', name: 'lookup', arguments: '{"day":1}' },
          { type: 'tool_call', id: '', name: 'log', arguments: '{}' },
        ],
      },
      { role: 'user', parts: [{ type: 'tool_result', callId: 'call_1', content: 'rain\n4 °C' }] },
      { role: 'user', parts: [{ type: 'tool_result', callId: '', name: 'log', content: '' }] },
      {
        role: 'assistant',
        parts: [
          { type: 'text', text: 'I cannot.' },
          { type: 'text', text: 'Not that.' },
        ],
      },
    ]);
  });

  it('Messages: blocks become parts directly (image, tool_use, tool_result with is_error, thinking: reasoning)', () => {
    const r = parseMessagesRequest({
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      system: 'be brief',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'A map, probably.', signature: 'sig_1' },
            { type: 'text', text: 'Let me ' },
            { type: 'text', text: 'check.' },
            { type: 'tool_use', id: 'call_1', name: 'lookup', input: { city: 'Oslo', day: 1 } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'text', text: 'rain' }], is_error: true },
            { type: 'text', text: 'And tomorrow?' },
          ],
        },
      ],
    });
    assert.deepEqual(r.messages, [
      { role: 'system', parts: [{ type: 'text', text: 'be brief' }] },
      {
        role: 'user',
        parts: [
          { type: 'text', text: 'What is this?' },
          { type: 'image', url: PNG_URL, at: 'messages.0.content.1' },
        ],
      },
      {
        role: 'assistant',
        parts: [
          { type: 'reasoning', text: 'A map, probably.', signature: 'sig_1' },
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_call', id: 'call_1', name: 'lookup', arguments: '{"city":"Oslo","day":1}' },
        ],
      },
      {
        role: 'user',
        parts: [
          { type: 'tool_result', callId: 'call_1', content: 'rain', isError: true },
          { type: 'text', text: 'And tomorrow?' },
        ],
      },
    ]);
    // The image is not text; the failed result is read as one; the thinking is never rendered.
    assert.equal(toPrompt(r.messages.map(withoutImages)).text, RENDERED.replace('\nrain\n', '\nError: rain\n'));
  });

  it('Responses: input items become parts directly (calls join the assistant message they follow)', () => {
    const p = parseResponsesRequest({
      model: 'm',
      input: [
        { role: 'developer', content: 'be brief' },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is this?' },
            { type: 'input_image', image_url: PNG_URL },
          ],
        },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Let me check.' }] },
        { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"day":1,"city":"Oslo"}' },
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'E' },
        { type: 'function_call_output', call_id: 'call_1', output: 'rain' },
        { role: 'user', content: 'And tomorrow?' },
      ],
    });
    assert.deepEqual(p.messages, [
      { role: 'system', parts: [{ type: 'text', text: 'be brief' }] },
      {
        role: 'user',
        parts: [
          { type: 'text', text: 'What is this?' },
          { type: 'image', url: PNG_URL, at: 'input.1.content.1' },
        ],
      },
      {
        role: 'assistant',
        parts: [
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_call', id: 'call_1', name: 'lookup', arguments: '{"day":1,"city":"Oslo"}' },
        ],
      },
      { role: 'user', parts: [{ type: 'tool_result', callId: 'call_1', content: 'rain' }] },
      { role: 'user', parts: [{ type: 'text', text: 'And tomorrow?' }] },
    ]);
    assert.equal(toPrompt(p.messages.map(withoutImages)).text, RENDERED);
  });
});

/** A message without its image parts (the text-only policy refuses images). */
function withoutImages(m: Message): Message {
  return { ...m, parts: m.parts.filter((p) => p.type !== 'image') };
}

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('stored responses', () => {
  const legacy = [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image_url', image_url: { url: PNG_URL } },
      ],
    },
  ];
  const continued = [
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'call_1', content: 'rain' },
  ];

  it("earlier versions' rows (chat-shaped messages) are read through the chat mapping; the core's as they are", () => {
    assert.deepEqual(fromStoredMessages(legacy), [
      {
        role: 'user',
        parts: [
          { type: 'text', text: 'What is this?' },
          { type: 'image', url: PNG_URL, at: 'previous_response_id' },
        ],
      },
    ]);
    assert.deepEqual(fromStoredMessages(continued), [
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'call_1', name: 'lookup', arguments: '{}' }] },
      { role: 'user', parts: [{ type: 'tool_result', callId: 'call_1', content: 'rain' }] },
    ]);
    const core: Message[] = [{ role: 'user', parts: [{ type: 'image', url: PNG_URL, at: 'input.0.content.0' }] }];
    assert.deepEqual(fromStoredMessages(core), [
      { role: 'user', parts: [{ type: 'image', url: PNG_URL, at: 'previous_response_id' }] },
    ]);
    assert.deepEqual(fromStoredMessages([]), []);
  });

  it('a chain of a legacy row and a new one continues as one conversation', () => {
    const dir = mkdtempSync(join(tmpdir(), 'olp-core-messages-'));
    dirs.push(dir);
    const store = openStore(dir);
    const { key } = store.keys.add('kid');
    const row = (id: string, previousResponseId: string | null, messages: unknown[], outputText: string) =>
      store.responses.save({
        id,
        keyId: key.id,
        createdAt: Date.now(),
        previousResponseId,
        items: [],
        messages,
        outputText,
        body: { id, object: 'response', output: [] },
      });
    row('resp_old', null, [{ role: 'user', content: 'What is this?' }], 'A map.');
    const next = parseResponsesRequest({ model: 'm', input: 'Of where?', previous_response_id: 'resp_old' });
    row('resp_new', 'resp_old', next.messages, 'Oslo.');
    const last = parseResponsesRequest({
      model: 'm',
      input: 'And tomorrow?',
      instructions: 'be brief',
      previous_response_id: 'resp_new',
    });
    const messages = toMessages(store, key.id, last);
    const chat = toCoreMessages(
      parseChatRequest({
        model: 'm',
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'What is this?' },
          { role: 'assistant', content: 'A map.' },
          { role: 'user', content: 'Of where?' },
          { role: 'assistant', content: 'Oslo.' },
          { role: 'user', content: 'And tomorrow?' },
        ],
      }).messages,
    );
    assert.deepEqual(messages, chat);
    assert.deepEqual(toPrompt(messages), toPrompt(chat));
    store.close();
  });
});

describe("a parked turn's results, matched by tool-result parts", () => {
  const turn = { id: 'parked' } as unknown as ToolParkedTurn;
  /** A registry that holds one turn on any calls, and notes what it was asked. */
  function registry() {
    const asked = { take: [] as string[][], retired: [] as string[][] };
    const parked = {
      take: (_key: string, ids: string[]) => {
        asked.take.push(ids);
        return turn;
      },
      retireAnswered: (_key: string, ids: Set<string>) => void asked.retired.push([...ids]),
    } as unknown as ParkedTurns;
    return { parked, asked };
  }
  const request = (last: unknown[]) =>
    parseMessagesRequest({
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      messages: [
        { role: 'user', content: 'look both up' },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'a', name: 'lookup', input: { n: 1 } },
            { type: 'tool_use', id: 'b', name: 'lookup', input: { n: 2 } },
          ],
        },
        { role: 'user', content: last },
      ],
    }).messages;

  it('the results that end the conversation continue the turn parked on their calls', () => {
    const { parked, asked } = registry();
    const plan = planParked(
      parked,
      'k',
      request([
        { type: 'tool_result', tool_use_id: 'a', content: 'one' },
        { type: 'tool_result', tool_use_id: 'b', content: 'failed', is_error: true },
      ]),
    );
    assert.deepEqual(asked.take, [['a', 'b']]);
    assert.deepEqual(asked.retired, [['a', 'b']]);
    assert.equal(plan?.turn, turn);
    assert.deepEqual(
      [...plan!.results],
      [
        ['b', 'Error: failed'],
        ['a', 'one'],
      ],
    );
  });

  it("results followed by the user's next words in the same message (as Claude Code sends them) continue the turn", () => {
    const { parked, asked } = registry();
    const plan = planParked(
      parked,
      'k',
      request([
        { type: 'tool_result', tool_use_id: 'a', content: 'one' },
        { type: 'tool_result', tool_use_id: 'b', content: 'two' },
        { type: 'text', text: 'and then?' },
      ]),
    );
    assert.deepEqual(asked.take, [['a', 'b']]);
    // The model reads the words after the message's last result.
    assert.deepEqual(
      [...plan!.results],
      [
        ['b', 'two\n\nand then?'],
        ['a', 'one'],
      ],
    );
    assert.deepEqual(asked.retired, [['a', 'b']]);
  });
});
