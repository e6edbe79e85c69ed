// A live codex (app-server) turn interrupted at the client's stop sequence: the parser's
// turn/interrupt request, and the turn's end as codex 0.171 reports it. Captured against the
// Responses stand-in (reference/codex-0.171.0-app-server-turn-interrupt.jsonl): one process, a
// turn answered, the next interrupted mid-stream, a third answered, then an interrupt too late.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createAppServerParser } from '../../src/backends/codex/live.js';
import type { BackendEvent } from '../../src/backends/index.js';
import type { ExitInfo } from '../../src/process/index.js';
import { REFERENCE } from '../support/paths.js';

/** How a live CLI's turn ends while its process stays up (as the run stage tells the parser). */
const LIVE_EXIT: ExitInfo = { reason: 'done', exitCode: 0, signal: null, stderr: '', pid: undefined, durationMs: 0 };

const lines = readFileSync(join(REFERENCE, 'codex-0.171.0-app-server-turn-interrupt.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean);
const ends = lines.flatMap((l, i) => (l.includes('"turn/completed"') ? [i] : []));
/** The lines of each turn: from the answer to its turn/start to its turn/completed. */
const answered = lines.slice(0, ends[0]! + 1);
const cut = lines.slice(ends[0]! + 1, ends[1]! + 1);
const next = lines.slice(ends[1]! + 1, ends[2]! + 1);
/** The answer to an interrupt that came after the turn had ended. */
const late = lines.at(-1)!;
const started = JSON.parse(cut.find((l) => l.includes('"turn/started"'))!) as {
  params: { threadId: string; turn: { id: string } };
};
const threadId = started.params.threadId;
const turnId = started.params.turn.id;
/** Where olp asked: after the third delta. */
const asked = cut.findIndex((l) => l.includes('"item/agentMessage/delta"') && l.includes('"and-in"'));

const text = (events: BackendEvent[]) => events.flatMap((e) => (e.type === 'text' ? [e.text] : [])).join('');

describe('codex app-server parser: interrupting the turn', () => {
  it("asks for turn/interrupt of this thread's running turn, once it knows both ids", () => {
    const parser = createAppServerParser();
    assert.equal(parser.interrupt?.(), '', 'no turn yet: nothing to interrupt');
    for (const l of cut.slice(0, cut.findIndex((l) => l.includes('"turn/started"')) + 1)) parser.push(l);
    const line = parser.interrupt!();
    assert.ok(line.endsWith('\n'));
    assert.deepEqual(JSON.parse(line), { id: 'olp-interrupt', method: 'turn/interrupt', params: { threadId, turnId } });
  });

  it('the interrupted turn ends ok, as interrupted, with its text so far; the restated total is not its usage', () => {
    const parser = createAppServerParser();
    const before = cut.slice(0, asked + 1).flatMap((l) => parser.push(l));
    assert.equal(text(before), 'responses stand-in');
    parser.interrupt!();
    const after = cut.slice(asked + 1);
    assert.ok(
      after.some((l) => l.includes('"thread/tokenUsage/updated"')),
      'codex restates the total as of the last reply it finished',
    );
    assert.equal(text(after.flatMap((l) => parser.push(l))), '');
    assert.equal(parser.complete, true);
    // The interrupted reply is counted nowhere (the next turn's total grows by its own only):
    // no usage, and the ledger estimates what was sent.
    assert.deepEqual(parser.finish(LIVE_EXIT), {
      ok: true,
      stopReason: { type: 'interrupted' },
      usage: null,
      sessionId: threadId,
    });
  });

  it("a running total replayed before the turn is known is not the turn's usage", () => {
    const parser = createAppServerParser();
    // After thread/resume codex 0.171 sends the thread's total again, tagged with an earlier
    // turn, before the next turn/start is answered: here the first turn's total stands for it.
    parser.push(answered.find((l) => l.includes('"thread/tokenUsage/updated"'))!);
    for (const l of cut.slice(0, asked + 1)) parser.push(l);
    parser.interrupt!();
    for (const l of cut.slice(asked + 1)) parser.push(l);
    assert.equal(parser.finish(LIVE_EXIT).usage, null);
  });

  it('a turn codex says was interrupted that olp did not interrupt is a failure', () => {
    const parser = createAppServerParser();
    for (const l of cut) parser.push(l);
    assert.equal(parser.finish(LIVE_EXIT).ok, false);
  });

  it("the answer to an interrupt that came too late is no turn's: the next turn reads past it", () => {
    const parser = createAppServerParser();
    assert.deepEqual(parser.push(late), []);
    assert.equal(parser.complete, false);
    const events = next.flatMap((l) => parser.push(l));
    assert.equal(text(events), 'responses stand-in heard: go on after the cut');
    const outcome = parser.finish(LIVE_EXIT);
    assert.ok(outcome.ok);
    assert.deepEqual(outcome.stopReason, { type: 'end' });
    // The thread's total: the first turn's and this one's (1212 each), none for the interrupted one.
    assert.equal(outcome.usage?.totalTokens, 2424);
  });
});
