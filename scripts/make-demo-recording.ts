// Makes scripts/demo/recording.jsonl by sending the demo's requests through olp in record mode,
// served by the fake CLIs of the test suite. Run: npm run build && node dist/scripts/make-demo-recording.js
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { parseConfig } from '../src/config/index.js';
import { createLogger } from '../src/log/index.js';
import { createRecording } from '../src/record/index.js';
import { startDaemon } from '../src/daemon.js';
import { FAKE_CLAUDE, FAKE_CODEX, ROOT } from '../test/support/paths.js';
import { DEMO_REQUESTS } from './demo/conversation.js';

const stateDir = mkdtempSync(join(tmpdir(), 'olp-demo-rec-'));
const file = createRecording(stateDir, 'demo', '0.1.0');
const config = parseConfig({
  readFile: false,
  env: {},
  overrides: {
    stateDir,
    port: 0,
    claudeBin: FAKE_CLAUDE,
    codexBin: FAKE_CODEX,
    logLevel: 'silent',
    recordMode: 'record',
    recordFile: 'demo',
  },
});
const daemon = await startDaemon({
  config,
  logger: createLogger('silent'),
  hostEnv: { PATH: process.env.PATH ?? '', HOME: stateDir },
});
try {
  const client = new OpenAI({ baseURL: `${daemon.url}/v1`, apiKey: daemon.store.keys.add('demo').token });
  for (const req of DEMO_REQUESTS) {
    const stream = await client.chat.completions.create({
      ...req,
      stream: true,
      stream_options: { include_usage: true },
    });
    for await (const _ of stream) {
      // recorded as it streams
    }
  }
} finally {
  await daemon.close();
}
copyFileSync(file, join(ROOT, 'scripts/demo/recording.jsonl'));
rmSync(stateDir, { recursive: true, force: true });
console.log('wrote scripts/demo/recording.jsonl');
