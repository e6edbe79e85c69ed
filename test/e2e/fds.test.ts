// Descriptors olp's parent leaked to it (opened without close-on-exec) never reach a CLI child.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type StdioOptions } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import { starterInfo } from '../../src/process/index.js';
import { FAKE_CLAUDE, OLP_BIN } from '../support/paths.js';

const base = mkdtempSync(join(tmpdir(), 'olp-fds-'));
after(() => rmSync(base, { recursive: true, force: true }));

// Node marks the descriptors just above its own start-up ones close-on-exec by itself; one far
// above them (as a shell's `exec 40<file` or a supervisor leaves it) stays inheritable.
const HIGH_FD = 40;

describe('olp serve and inherited descriptors', { skip: process.platform !== 'linux' && 'Linux only (/proc)' }, () => {
  // Both ways olp starts a CLI: the native starter (posix_spawn) and Node's child_process.
  for (const starter of ['posix_spawn', 'node'] as const)
    it(`a file descriptor olp inherited is not among a CLI child’s descriptors (${starter})`, async () => {
      const stateDir = join(base, `state-${starter}`);
      const token = spawnSync(process.execPath, [OLP_BIN, 'keys', 'add', 'me', '--state-dir', stateDir], {
        encoding: 'utf8',
      })
        .stdout.trim()
        .split('\n')
        .at(-1)!;
      const low = join(base, 'leaked-low.txt');
      const high = join(base, 'leaked-high.txt');
      writeFileSync(low, 'secret');
      writeFileSync(high, 'secret');
      const lowFd = openSync(low, 'r');
      const highFd = openSync(high, 'r');
      const stdio: StdioOptions = [
        'ignore',
        'pipe',
        'pipe',
        lowFd,
        ...Array<'ignore'>(HIGH_FD - 4).fill('ignore'),
        highFd,
      ];
      const child = spawn(
        process.execPath,
        [
          OLP_BIN,
          'serve',
          '--state-dir',
          stateDir,
          '--port',
          '0',
          '--claude-bin',
          FAKE_CLAUDE,
          '--shutdown-grace',
          '1',
        ],
        {
          env: {
            PATH: process.env.PATH ?? '',
            HOME: base,
            ...(starter === 'node' ? { OLP_NATIVE_SPAWN: '0', OLP_HEAP_TUNING: '0' } : {}),
          },
          stdio,
        },
      );
      closeSync(lowFd);
      closeSync(highFd);
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      try {
        const url = await new Promise<string>((resolve, reject) => {
          createInterface({ input: child.stdout! }).once('line', resolve);
          child.once('exit', () => reject(new Error('olp exited before listening')));
        });
        const res = await fetch(`${url}/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'sonnet', messages: [{ role: 'user', content: '[[fake:report-env]]' }] }),
        });
        assert.equal(res.status, 200);
        const health = (await (
          await fetch(url.replace(/\/v1$/, '/health'), { headers: { authorization: `Bearer ${token}` } })
        ).json()) as {
          spawn: { kind: string };
          memory: { heapTuned: boolean; mallocArenas: number | null; rssMb: number };
        };
        if (starter === 'node' || starterInfo().kind === 'posix_spawn') assert.equal(health.spawn.kind, starter);
        // olp serve runs on olp's heap settings unless told not to (the Node-spawn daemon is told).
        assert.equal(health.memory.heapTuned, starter === 'posix_spawn');
        // ...and, where the addon is loaded (glibc), on at most two malloc arenas.
        assert.equal(
          health.memory.mallocArenas,
          starter === 'posix_spawn' && starterInfo().kind === 'posix_spawn' ? 2 : null,
        );
        assert.ok(health.memory.rssMb > 10 && health.memory.rssMb < 1000, String(health.memory.rssMb));
        const body = (await res.json()) as { choices: { message: { content: string } }[] };
        const report = JSON.parse(body.choices[0]!.message.content) as { fds: string[] };
        assert.ok(report.fds.length >= 3, JSON.stringify(report.fds));
        for (const file of [low, high])
          assert.ok(
            !report.fds.some((f) => f.endsWith(` -> ${file}`)),
            `${file} leaked into the CLI: ${report.fds.join(', ')}`,
          );
      } finally {
        child.kill('SIGTERM');
        assert.equal(await exited, 0);
      }
    });
});
