import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLineSplitter, LineTooLongError } from '../../src/process/index.js';

/** Feeds `total` bytes of one line in `chunk`-byte pieces and returns the ms it took to split. */
function splitOneLine(total: number, chunk = 64 * 1024): number {
  const s = createLineSplitter();
  const piece = Buffer.alloc(chunk, 'a');
  const t0 = performance.now();
  for (let sent = 0; sent < total; sent += chunk) assert.deepEqual(s.push(piece), []);
  const [line] = s.push(Buffer.from('\n'));
  const ms = performance.now() - t0;
  assert.equal(line!.length, Math.ceil(total / chunk) * chunk);
  return ms;
}

describe('line splitter', () => {
  it('splits at any chunk boundary, mid-character included', () => {
    const text = '{"a":"é😀"}\r\n\n{"b":2}\nlast';
    const bytes = Buffer.from(text, 'utf8');
    for (let cut = 1; cut < bytes.length; cut++) {
      const s = createLineSplitter();
      const lines = [...s.push(bytes.subarray(0, cut)), ...s.push(bytes.subarray(cut)), ...s.end()];
      assert.deepEqual(lines, ['{"a":"é😀"}', '{"b":2}', 'last'], `cut at ${cut}`);
    }
  });

  it('is linear in the line length: a 50 MB line splits in about ten times the time of a 5 MB one, not a hundred', (ctx) => {
    splitOneLine(1024 * 1024); // warm up
    const small = Math.min(splitOneLine(5 * 1024 * 1024), splitOneLine(5 * 1024 * 1024));
    const big = Math.min(splitOneLine(50 * 1024 * 1024), splitOneLine(50 * 1024 * 1024));
    ctx.diagnostic(`5 MB line: ${small.toFixed(1)} ms, 50 MB line: ${big.toFixed(1)} ms`);
    // Quadratic splitting took 0.5 s and 19-29 s; linear stays far below both.
    assert.ok(big < 5000, `50 MB took ${big} ms`);
    assert.ok(big < small * 40 + 200, `50 MB took ${big} ms against ${small} ms for 5 MB`);
  });

  it('refuses a line past its cap and recovers for the next line', () => {
    const s = createLineSplitter(1000);
    assert.deepEqual(s.push(Buffer.alloc(600, 'x')), []);
    assert.throws(() => s.push(Buffer.alloc(600, 'x')), LineTooLongError);
    assert.deepEqual(s.push(Buffer.from('tail\nnext\n')), ['tail', 'next']);
  });

  it('counts a line across chunks that also finish other lines', () => {
    const s = createLineSplitter(10);
    assert.deepEqual(s.push(Buffer.from('ok\n12345')), ['ok']);
    assert.deepEqual(s.push(Buffer.from('678\nab')), ['12345678']);
    assert.throws(() => s.push(Buffer.from('cdefghijkl')), LineTooLongError);
  });
});
