// Many conversations of one key at once, as an agent holds them (sub-agents, parallel threads):
// how their continued turns run through olp's session pool. Each key runs --conversations
// conversations at once, --turns turns each (a short pause between turns), on the fake claude with
// olp's defaults otherwise (sessions, live workers, pre-started spares). Prints, per run and as the
// median of the runs with the spread, the share of continued turns (turn 2 on) that ran warm (a live
// worker), resumed from disk, or re-sent whole (a fresh session or none), the rotations (a slot's
// session replaced: fresh turns whose reason is not `initial`) and the slots the key ended with.
//   node dist/scripts/conversations.js [--runs 3] [--keys 1] [--conversations 8] [--turns 8]
//     [--delay-ms 20] [--pause-ms 50] [--bin OTHER/dist/src/cli/main.js] [--json] [-- olp serve options]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openStore } from '../src/store/index.js';
import { FAKE_CLAUDE, OLP_BIN } from '../test/support/paths.js';
import { addKey, serve } from './daemon.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    runs: { type: 'string', default: '3' },
    keys: { type: 'string', default: '1' },
    conversations: { type: 'string', default: '8' },
    turns: { type: 'string', default: '8' },
    'delay-ms': { type: 'string', default: '20' },
    'pause-ms': { type: 'string', default: '50' },
    bin: { type: 'string', default: OLP_BIN },
    json: { type: 'boolean', default: false },
  },
});
const runs = Number(values.runs);
const keys = Number(values.keys);
const perKey = Number(values.conversations);
const turns = Number(values.turns);
const pauseMs = Number(values['pause-ms']);

interface Figures {
  turns: number;
  continued: number;
  warm: number;
  resumed: number;
  whole: number;
  rotations: number;
  failed: number;
  slots: number;
}

type Msg = { role: 'user' | 'assistant'; content: string };

/** One conversation: `turns` requests, each the whole history plus a new user message; returns the request ids of turns 2 on. */
async function converse(base: string, token: string, name: string): Promise<{ continued: string[]; failed: number }> {
  const messages: Msg[] = [];
  const continued: string[] = [];
  let failed = 0;
  for (let i = 0; i < turns; i++) {
    messages.push({ role: 'user', content: `${name}: step ${i}` });
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sonnet', messages }),
    });
    const body = (await res.json()) as { choices?: { message: { content: string } }[] };
    if (!body.choices) {
      failed++;
      messages.pop();
      continue;
    }
    if (i > 0) continued.push(res.headers.get('x-request-id')!);
    messages.push({ role: 'assistant', content: body.choices[0]!.message.content });
    await new Promise((r) => setTimeout(r, Math.random() * pauseMs));
  }
  return { continued, failed };
}

async function once(): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), 'olp-conversations-'));
  const stateDir = join(dir, 'state');
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: dir,
    OLP_CLAUDE_ENV: JSON.stringify({ FAKE_CLAUDE_DELAY_MS: values['delay-ms'] }),
  };
  const tokens = Array.from({ length: keys }, (_, k) => addKey(stateDir, `agent${k}`, env, values.bin));
  const { daemon, base } = serve({
    stateDir,
    env,
    bin: values.bin,
    args: ['--claude-bin', FAKE_CLAUDE, '--log-level', 'warn', ...positionals],
  });
  daemon.stderr!.resume();
  const exited = new Promise((r) => daemon.once('exit', r));
  try {
    const url = await base;
    const results = await Promise.all(
      tokens.flatMap((token, k) =>
        Array.from({ length: perKey }, (_, c) => converse(url, token, `key ${k} chat ${c}`)),
      ),
    );
    daemon.kill('SIGTERM');
    await exited;
    const store = openStore(stateDir);
    try {
      const rows = new Map([...store.usage.export({ scope: { all: true } })].map((r) => [r.request_id, r]));
      const continued = results.flatMap((r) => r.continued).map((id) => rows.get(id)!);
      return {
        turns: rows.size,
        continued: continued.length,
        warm: continued.filter((r) => r.run_mode === 'warm').length,
        resumed: continued.filter((r) => r.session_mode === 'resumed' && r.run_mode !== 'warm').length,
        whole: continued.filter((r) => r.session_mode !== 'resumed' && r.run_mode !== 'warm').length,
        rotations: [...rows.values()].filter((r) => r.session_mode === 'fresh' && r.rotation_reason !== 'initial')
          .length,
        failed: results.reduce((n, r) => n + r.failed, 0),
        slots: store.slots.list().length / keys,
      };
    } finally {
      store.close();
    }
  } finally {
    daemon.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pct = (n: number, of: number) => (of === 0 ? 0 : Math.round((1000 * n) / of) / 10);

const all: Figures[] = [];
for (let i = 0; i < runs; i++) {
  const f = await once();
  all.push(f);
  if (!values.json)
    console.log(
      `run ${i + 1}: ${f.continued} continued turns: warm ${pct(f.warm, f.continued)}%, resumed ${pct(f.resumed, f.continued)}%, ` +
        `re-sent whole ${pct(f.whole, f.continued)}%; ${f.rotations} rotations in ${f.turns} turns; ${f.slots} slots a key; ${f.failed} failed`,
    );
}
const shares = {
  warm: all.map((f) => pct(f.warm, f.continued)),
  resumed: all.map((f) => pct(f.resumed, f.continued)),
  whole: all.map((f) => pct(f.whole, f.continued)),
  rotations: all.map((f) => f.rotations),
  slots: all.map((f) => f.slots),
};
const summary = Object.fromEntries(
  Object.entries(shares).map(([k, xs]) => [k, { median: median(xs), min: Math.min(...xs), max: Math.max(...xs) }]),
);
if (values.json) console.log(JSON.stringify({ runs: all, summary }));
else {
  console.log(`${keys} key(s) x ${perKey} conversations x ${turns} turns, ${runs} run(s): median (min-max)`);
  for (const [k, s] of Object.entries(summary))
    console.log(`  ${k.padEnd(9)} ${s.median}${k === 'rotations' || k === 'slots' ? '' : '%'} (${s.min}-${s.max})`);
}
