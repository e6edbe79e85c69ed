// Checks for the real-CLI tier: a newer CLI's output must not slip by unread, and nothing it
// writes may outlive its run.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestDaemon } from './daemon.js';

/** Fails, naming them, when the CLI printed event types olp's parsers do not know (call it after the daemon stopped). */
export function assertUnderstood(logs: TestDaemon['logs']): void {
  const unknown = logs.filter((l) => l.event === 'cli_unknown_event').map((l) => String(l.type));
  assert.deepEqual(
    unknown,
    [],
    `the CLI printed event types olp does not understand: ${unknown.join(', ')} (read them, then handle or list them as ignored)`,
  );
}

/** What is in the shared temp folder claude would use (<tmpdir>/claude-<uid>) now. */
export function claudeTmp(): Set<string> {
  const dir = join(tmpdir(), `claude-${process.getuid?.() ?? 0}`);
  return new Set(existsSync(dir) ? readdirSync(dir) : []);
}

/** Fails when claude left something in the shared temp folder since `before`. */
export function assertNoClaudeTmp(before: Set<string>): void {
  const added = [...claudeTmp()].filter((e) => !before.has(e));
  assert.deepEqual(added, [], 'claude wrote outside its run (its TMPDIR is the run’s own)');
}
