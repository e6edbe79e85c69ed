// The daemon's log destination: readable lines, and a reader that stalls or leaves costs olp nothing.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { createLogger, createLogOutput, toTextLine } from '../../src/log/index.js';

/** A stream that takes nothing: its buffer only grows, as a pipe nobody reads. */
function stalled(): Writable & { chunks: string[] } {
  const chunks: string[] = [];
  const w = new Writable({
    highWaterMark: 16,
    write(_chunk, _enc, _cb) {
      /* never calls back */
    },
  }) as Writable & { chunks: string[] };
  w.chunks = chunks;
  return w;
}

function collecting(): Writable & { text: string } {
  const w = new Writable({
    write(chunk: Buffer, _enc, cb) {
      w.text += chunk.toString('utf8');
      cb();
    },
  }) as Writable & { text: string };
  w.text = '';
  return w;
}

describe('log output', () => {
  it('text: time, level, message, the other fields; control characters escaped', () => {
    const line = toTextLine(
      JSON.stringify({
        level: 40,
        time: '2026-01-02T03:04:05.678Z',
        service: 'olp',
        event: 'fallback',
        model: 'x\u001b]0;pwned\u0007',
        msg: 'falling back',
      }),
    );
    assert.equal(line, '03:04:05 WARN  falling back model=x\\x1b]0;pwned\\x07\n');
    assert.equal(
      toTextLine(
        JSON.stringify({
          level: 50,
          time: '2026-01-02T03:04:05.678Z',
          err: { message: 'boom' },
          msg: 'internal error',
        }),
      ),
      '03:04:05 ERROR internal error: boom\n',
    );
  });

  it('held lines wait for release and come after what was written meanwhile; the omitted events never come', () => {
    const w = collecting();
    const out = createLogOutput(w, 'text');
    const logger = createLogger('info', out);
    out.hold(new Set(['no_keys']));
    logger.warn({ event: 'no_keys' }, 'no keys');
    logger.warn({ event: 'workspace_sweep' }, 'swept');
    w.write('SUMMARY\n');
    out.release();
    logger.info('after');
    assert.deepEqual(
      w.text
        .split('\n')
        .filter(Boolean)
        .map((l) => l.replace(/^\S+ \S+\s+/, '')),
      ['SUMMARY', 'swept', 'after'],
    );
  });

  it('a reader that never reads holds at most a megabyte; settle() returns anyway', async () => {
    const w = stalled();
    const out = createLogOutput(w, 'json');
    const logger = createLogger('info', out);
    for (let i = 0; i < 20_000; i++) logger.info({ i, pad: 'x'.repeat(100) }, 'line');
    assert.ok(w.writableLength <= 1024 * 1024 + 1000, `${w.writableLength} bytes waiting`);
    assert.ok(out.dropped > 0);
    const started = Date.now();
    const alive = setTimeout(() => undefined, 5000); // settle's own timer does not keep a process alive
    await out.settle(200);
    clearTimeout(alive);
    assert.ok(Date.now() - started < 1000);
  });

  it('a reader that has gone: writes end quietly', async () => {
    const w = new Writable({
      write(_c, _e, cb) {
        cb(Object.assign(new Error('EPIPE'), { code: 'EPIPE' }));
      },
    });
    const out = createLogOutput(w, 'json');
    const logger = createLogger('info', out);
    logger.info('first');
    await new Promise((r) => setImmediate(r));
    logger.info('second');
    const alive = setTimeout(() => undefined, 5000);
    await out.settle(1000);
    clearTimeout(alive);
    assert.equal(out.dropped, 1);
  });
});
