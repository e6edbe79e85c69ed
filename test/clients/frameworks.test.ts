// The clients people point at olp, on both endpoints: the Vercel AI SDK (its default `openai(id)`
// speaks the Responses API; `.chat(id)` chat completions) and LangChain's ChatOpenAI (with and
// without `useResponsesApi`). Answers, streaming and usage, against a real listening olp.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createOpenAI } from '@ai-sdk/openai';
import { ChatOpenAI } from '@langchain/openai';
import { tool as langchainTool } from '@langchain/core/tools';
import { type AIMessage, HumanMessage, type ToolMessage } from '@langchain/core/messages';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
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
      const llm = new ChatOpenAI({
        model: 'codex',
        apiKey: t.token,
        configuration: { baseURL: t.baseURL },
        useResponsesApi,
        maxRetries: 0,
        streamUsage: true,
      });
      const msg = await llm.invoke([
        ['system', 'be brief'],
        ['human', 'langchain ping'],
      ]);
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

/** A prompt that makes the fake model call get_weather for these cities, in one step. */
const weatherPrompt = (cities: string[]) =>
  `Weather please. [[fake-tools:${JSON.stringify(cities.map((city) => ({ name: 'get_weather', arguments: { city } })))}]]`;

describe('tool loops through olp', () => {
  it('AI SDK generateText with tools and several steps on its default provider (the Responses API)', async () => {
    const provider = createOpenAI({ baseURL: t.baseURL, apiKey: t.token });
    const tools = {
      get_weather: tool({
        description: 'The weather in a city',
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }) => `fog in ${city}`,
      }),
    };
    const r = await generateText({
      model: provider('sonnet'),
      tools,
      stopWhen: stepCountIs(3),
      prompt: weatherPrompt(['Quito', 'Cusco']),
      maxRetries: 0,
    });
    assert.equal(r.steps.length, 2);
    assert.match(r.text, /^echo: .*fog in Quito.* \| .*fog in Cusco/);
  });

  it('AI SDK generateText and streamText with tools and several steps (chat completions)', async () => {
    const provider = createOpenAI({ baseURL: t.baseURL, apiKey: t.token });
    const tools = {
      get_weather: tool({
        description: 'The weather in a city',
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }) => `sunny in ${city}`,
      }),
    };
    const r = await generateText({
      model: provider.chat('sonnet'),
      tools,
      stopWhen: stepCountIs(3),
      prompt: weatherPrompt(['Paris', 'Tokyo']),
      maxRetries: 0,
    });
    assert.equal(r.steps.length, 2);
    assert.deepEqual(
      r.steps[0]!.toolCalls.map((c) => c.input),
      [{ city: 'Paris' }, { city: 'Tokyo' }],
    );
    assert.match(r.text, /^echo: .*sunny in Paris.* \| .*sunny in Tokyo/);
    const s = streamText({
      model: provider.chat('sonnet'),
      tools,
      stopWhen: stepCountIs(3),
      prompt: weatherPrompt(['Lima']),
      maxRetries: 0,
    });
    let text = '';
    for await (const piece of s.textStream) text += piece;
    assert.match(text, /^echo: .*sunny in Lima/);
    assert.equal((await s.steps).length, 2);
  });

  it("LangChain bindTools: the model's tool_calls, then the ToolMessage's answer", async () => {
    const weather = langchainTool(async ({ city }: { city: string }) => `rain in ${city}`, {
      name: 'get_weather',
      description: 'The weather in a city',
      schema: z.object({ city: z.string() }),
    });
    const llm = new ChatOpenAI({
      model: 'sonnet',
      apiKey: t.token,
      configuration: { baseURL: t.baseURL },
      maxRetries: 0,
    }).bindTools([weather]);
    const human = new HumanMessage(weatherPrompt(['Bergen']));
    const ai = await llm.invoke([human]);
    assert.deepEqual(
      ai.tool_calls?.map((c) => [c.name, c.args]),
      [['get_weather', { city: 'Bergen' }]],
    );
    const result = await weather.invoke(ai.tool_calls![0]!);
    const answer = await llm.invoke([human, ai as AIMessage, result as ToolMessage]);
    assert.equal(answer.text, 'echo: rain in Bergen');
  });
});
