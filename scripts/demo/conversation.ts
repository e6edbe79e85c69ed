// The requests of the demo: recorded once by scripts/make-demo-recording.ts, replayed by npm run demo.
import type OpenAI from 'openai';

export const DEMO_SYSTEM = 'You are the olp demo. Answer in one or two sentences.';

export const DEMO_REQUESTS: OpenAI.ChatCompletionCreateParamsNonStreaming[] = [
  {
    model: 'sonnet',
    messages: [
      { role: 'system', content: DEMO_SYSTEM },
      { role: 'user', content: 'Say hello to someone trying olp for the first time.' },
    ],
  },
  {
    model: 'codex',
    messages: [
      { role: 'system', content: DEMO_SYSTEM },
      { role: 'user', content: 'What does an OpenAI-compatible proxy do?' },
    ],
  },
];
