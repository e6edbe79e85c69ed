// npm run demo: olp replaying a recording shipped in the repository, and an `openai`-client
// script against it. No CLI installed, no login, nothing leaves the machine.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { parseConfig } from '../src/config/index.js';
import { createLogger } from '../src/log/index.js';
import { startDaemon } from '../src/daemon.js';
import { ROOT } from '../test/support/paths.js';
import { DEMO_REQUESTS } from './demo/conversation.js';

const stateDir = mkdtempSync(join(tmpdir(), 'olp-demo-'));
const config = parseConfig({
  readFile: false,
  env: {},
  overrides: {
    stateDir,
    port: 0,
    logLevel: 'silent',
    recordMode: 'replay',
    recordFile: join(ROOT, 'scripts/demo/recording.jsonl'),
    replaySpeed: 1,
  },
});
const daemon = await startDaemon({ config, logger: createLogger('silent'), hostEnv: { PATH: '', HOME: stateDir } });
try {
  const baseURL = `${daemon.url}/v1`;
  const client = new OpenAI({ baseURL, apiKey: daemon.store.keys.add('demo').token });
  console.log(`olp is replaying a recording at ${baseURL} (no CLI, no login)\n`);
  for (const req of DEMO_REQUESTS) {
    console.log(`> [${req.model}] ${String(req.messages.at(-1)?.content)}`);
    const stream = await client.chat.completions.create({
      ...req,
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      process.stdout.write(chunk.choices[0]?.delta.content ?? '');
      usage = chunk.usage ?? usage;
    }
    console.log(
      `\n  usage: ${usage?.prompt_tokens} prompt (${usage?.prompt_tokens_details?.cached_tokens} cached) + ${usage?.completion_tokens} completion tokens\n`,
    );
  }
} finally {
  await daemon.close();
  rmSync(stateDir, { recursive: true, force: true });
}
