// Structured output from the clients people use: the Vercel AI SDK's generateObject (with the
// OpenAI provider, and with openai-compatible both by default, which sends json_object without the
// schema, and with supportsStructuredOutputs) and LangChain's withStructuredOutput.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { ChatOpenAI } from '@langchain/openai';
import { generateObject } from 'ai';
import { z } from 'zod';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';

const Weather = z.object({ city: z.string(), temp: z.number() });
const PARIS = { city: 'Paris', temp: 21 };
const asking = `weather in Paris, as JSON [[fake-json:${JSON.stringify(PARIS)}]]`;

let t: TestDaemon;
// Without a schema the model only hears "reply with a JSON object", and writes it fenced.
let fenced: TestDaemon;
before(async () => {
  t = await startTestDaemon();
  fenced = await startTestDaemon({
    claudeEnv: { FAKE_CLAUDE_REPLY: `\`\`\`json\n${JSON.stringify(PARIS, null, 2)}\n\`\`\`` },
  });
});
after(async () => {
  await t.close();
  await fenced.close();
});

describe('Vercel AI SDK generateObject', () => {
  it('@ai-sdk/openai (chat and Responses): the schema goes to the CLI', async () => {
    const provider = createOpenAI({ baseURL: t.baseURL, apiKey: t.token });
    for (const model of [provider.chat('sonnet'), provider('sonnet')]) {
      const { object } = await generateObject({ model, schema: Weather, prompt: asking, maxRetries: 0 });
      assert.deepEqual(object, PARIS);
    }
  });

  it('@ai-sdk/openai-compatible by default (json_object, no schema): the fenced reply still parses', async () => {
    const provider = createOpenAICompatible({ name: 'olp', baseURL: fenced.baseURL, apiKey: fenced.token });
    const { object } = await generateObject({
      model: provider('sonnet'),
      schema: Weather,
      prompt: 'weather in Paris',
      maxRetries: 0,
    });
    assert.deepEqual(object, PARIS);
  });

  it('@ai-sdk/openai-compatible with supportsStructuredOutputs: the schema goes to the CLI', async () => {
    const provider = createOpenAICompatible({
      name: 'olp',
      baseURL: t.baseURL,
      apiKey: t.token,
      supportsStructuredOutputs: true,
    });
    const { object } = await generateObject({
      model: provider('sonnet'),
      schema: Weather,
      prompt: asking,
      maxRetries: 0,
    });
    assert.deepEqual(object, PARIS);
  });
});

describe('LangChain withStructuredOutput', () => {
  it('jsonSchema method: the schema goes to the CLI', async () => {
    const llm = new ChatOpenAI({
      model: 'sonnet',
      apiKey: t.token,
      configuration: { baseURL: t.baseURL },
      maxRetries: 0,
    });
    const out = await llm.withStructuredOutput(Weather, { method: 'jsonSchema' }).invoke(asking);
    assert.deepEqual(out, PARIS);
  });

  it('jsonMode: the fenced reply still parses', async () => {
    const llm = new ChatOpenAI({
      model: 'sonnet',
      apiKey: fenced.token,
      configuration: { baseURL: fenced.baseURL },
      maxRetries: 0,
    });
    const out = await llm.withStructuredOutput(Weather, { method: 'jsonMode' }).invoke('weather in Paris, as JSON');
    assert.deepEqual(out, PARIS);
  });
});
