// A long conversation through olp on the real `claude` against the loopback stand-in for the
// Anthropic Messages API with a context limit: how many of its turns are answered while olp's
// session slot rotates at its turn cap. Defaults: 250 turns, a turn cap of 120, 8,000 characters
// a user message, the stand-in counting two characters a token and taking 90,000 tokens, claude
// compacting in a 100,000-token window, `--context-overflow trim`.
//
//   node dist/scripts/long-conversation.js [--turns 250] [--cap 120] [--chars 8000] [--limit 90000] [--overflow trim|refuse] [--workers] [--current]
import { parseArgs } from 'node:util';
import { CLAUDE_BASELINE, CLAUDE_CURRENT } from '../test/support/paths.js';
import { runLongConversation } from '../test/support/long-conversation.js';

const { values } = parseArgs({
  options: {
    turns: { type: 'string', default: '250' },
    cap: { type: 'string', default: '120' },
    chars: { type: 'string', default: '8000' },
    limit: { type: 'string', default: '90000' },
    overflow: { type: 'string', default: 'trim' },
    workers: { type: 'boolean', default: false },
    current: { type: 'boolean', default: false },
  },
});

const started = Date.now();
const r = await runLongConversation({
  claudeBin: values.current ? CLAUDE_CURRENT : CLAUDE_BASELINE,
  turns: Number(values.turns),
  turnCap: Number(values.cap),
  userChars: Number(values.chars),
  charsPerToken: 2,
  limitTokens: Number(values.limit),
  compactWindow: 100_000,
  contextOverflow: values.overflow === 'refuse' ? 'refuse' : 'trim',
  workers: values.workers,
  onTurn: (i, ok, detail) => {
    if (!ok || i % 10 === 0) process.stderr.write(`turn ${i}: ${ok ? 'ok' : 'FAILED'} ${detail}\n`);
  },
});
console.log(
  JSON.stringify(
    {
      turns: Number(values.turns),
      turnCap: Number(values.cap),
      answered: r.answered,
      failed: r.failed.length,
      firstFailures: r.failed.slice(0, 3),
      rotations: r.rotations,
      standInRefused: r.refused,
      standInRequests: r.requests,
      resentTranscripts: r.resent,
      largestPromptTokens: r.maxTokens,
      seconds: Math.round((Date.now() - started) / 1000),
    },
    null,
    2,
  ),
);
