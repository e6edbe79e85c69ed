// The clients people point at olp, on both endpoints: the Vercel AI SDK (its default `openai(id)`
// speaks the Responses API; `.chat(id)` chat completions) and LangChain's ChatOpenAI (with and
// without `useResponsesApi`). Answers, streaming and usage, against a real listening olp.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createOpenAI } from '@ai-sdk/openai';
import { ChatOpenAI } from '@langchain/openai';
import { generateText, streamText } from 'ai';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';

let t: TestDaemon;
before(async () => {
  t = await startTestDaemon();
});
after(async () => t.close());

describe('Vercel AI SDK', () => {
  for (const [label, pick] of [
    ['openai(id) → /v1/responses', (p: ReturnType<typeof createOpenAI>) => p('sonnet')],
    ['openai.chat(id) → /v1/chat/completions', (p: ReturnType<typeof createOpenAI>) => p.chat('sonnet')],
  ] as const) {
    it(`${label}: generateText and streamText with usage`, async () => {
      const provider = createOpenAI({ baseURL: t.baseURL, apiKey: t.token });
      const r = await generateText({ model: pick(provider), prompt: 'ai sdk ping', maxRetries: 0 });
      assert.equal(r.text, 'Hello from fake claude. You said: ai sdk ping');
      assert.ok((r.usage.inputTokens ?? 0) > 0 && (r.usage.outputTokens ?? 0) > 0, JSON.stringify(r.usage));
      const s = streamText({ model: pick(provider), prompt: 'ai sdk stream', maxRetries: 0 });
      let text = '';
      for await (const piece of s.textStream) text += piece;
      assert.equal(text, 'Hello from fake claude. You said: ai sdk stream');
      const usage = await s.usage;
      assert.ok((usage.outputTokens ?? 0) > 0, JSON.stringify(usage));
    });
  }
});

describe('LangChain ChatOpenAI', () => {
  for (const useResponsesApi of [true, false]) {
    it(`useResponsesApi: ${useResponsesApi}: invoke and stream with usage`, async () => {
      const llm = new ChatOpenAI({ model: 'codex', apiKey: t.token, configuration: { baseURL: t.baseURL }, useResponsesApi, maxRetries: 0, streamUsage: true });
      const msg = await llm.invoke([['system', 'be brief'], ['human', 'langchain ping']]);
      assert.equal(msg.text, 'Hello from fake codex. You said: langchain ping');
      assert.ok((msg.usage_metadata?.input_tokens ?? 0) > 0, JSON.stringify(msg.usage_metadata));
      let text = '';
      let usage = 0;
      for await (const chunk of await llm.stream('langchain stream')) {
        text += chunk.text;
        usage += chunk.usage_metadata?.output_tokens ?? 0;
      }
      assert.equal(text, 'Hello from fake codex. You said: langchain stream');
      assert.ok(usage > 0);
    });
  }
});
