// Which CLI olp runs: the user's own on PATH (never the copies pinned in olp's node_modules for
// its test tier), and a relative --claude-bin meaning the directory olp started in.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import { resolveBin, withoutOwnBins } from '../../src/backends/index.js';
import { startTestDaemon } from '../support/daemon.js';
import { FAKE_CLAUDE, ROOT } from '../support/paths.js';

const base = mkdtempSync(join(tmpdir(), 'olp-resolve-'));
after(() => rmSync(base, { recursive: true, force: true }));
const ownBin = join(ROOT, 'node_modules', '.bin');

/** A `claude` of the user's own: the fake, answering with a marker. */
function userClaude(): string {
  const dir = join(base, 'user-bin');
  const file = join(dir, 'claude');
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, `#!/bin/sh\nFAKE_CLAUDE_REPLY="from the user's own claude" exec "${FAKE_CLAUDE}" "$@"\n`);
  chmodSync(file, 0o755);
  return dir;
}

describe('CLI resolution', () => {
  it("skips olp's own node_modules/.bin, which npm scripts put first on PATH", () => {
    const path = [ownBin, '/usr/local/bin', join(ROOT, 'node_modules', 'x', '.bin'), '/usr/bin'].join(':');
    assert.equal(withoutOwnBins(path), '/usr/local/bin:/usr/bin');
    assert.equal(resolveBin('claude', ownBin), 'claude', 'the pinned copy is never chosen');
    assert.equal(resolveBin('bin/claude', '', '/srv/olp'), '/srv/olp/bin/claude');
  });

  it("runs the user's claude even when olp's pinned one comes first on PATH", async () => {
    const userDir = userClaude();
    const t = await startTestDaemon({
      config: { claudeBin: 'claude' },
      hostEnv: { PATH: `${ownBin}:${userDir}:${process.env.PATH ?? ''}` },
    });
    try {
      const res = await fetch(`${t.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sonnet', messages: [{ role: 'user', content: 'hi' }] }),
      });
      const body = (await res.json()) as { choices: { message: { content: string } }[] };
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.equal(body.choices[0]!.message.content, "from the user's own claude");
      const [claude] = await t.daemon.detect();
      assert.equal(claude!.path, join(userDir, 'claude'));
    } finally {
      await t.close();
    }
  });

  it('a relative --claude-bin means the directory olp started in, not the run workspace', async () => {
    const rel = relative(process.cwd(), FAKE_CLAUDE);
    assert.ok(!rel.startsWith('/'));
    const t = await startTestDaemon({ config: { claudeBin: rel } });
    try {
      const res = await fetch(`${t.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sonnet', messages: [{ role: 'user', content: 'hi' }] }),
      });
      assert.equal(res.status, 200, await res.text());
    } finally {
      await t.close();
    }
  });

  it('a relative --claude-bin that does not exist is reported at start with the full path', async () => {
    const t = await startTestDaemon({ config: { claudeBin: 'no/such/claude' } });
    try {
      const warn = t.logs.find((l) => l.event === 'backend_missing' && l.backend === 'claude');
      assert.equal(warn?.bin, join(process.cwd(), 'no/such/claude'));
    } finally {
      await t.close();
    }
  });
});
