import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { runDirFor } from '../../src/workspace/index.js';
import { listTree } from './paths.js';

/** True while the pid is a live process (a zombie waiting for a reaper counts as gone). */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/**
 * Waits until none of the pids is alive; returns the ones still alive at the deadline (the test's
 * patience on a busy machine, not a claim about how fast olp stops them).
 */
export async function waitGone(pids: number[], timeoutMs = 30_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const alive = pids.filter(isAlive);
    if (alive.length === 0 || Date.now() > deadline) return alive;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Pids the fake CLI recorded (runs and grandchildren) in FAKE_CLAUDE_RECORD_DIR. */
export function recordedPids(dir: string): { runs: number[]; grandchildren: number[] } {
  const runs: number[] = [];
  const grandchildren: number[] = [];
  for (const f of readdirSync(dir)) {
    const pid = Number(f.split('.')[0]);
    if (f.endsWith('.json')) runs.push(pid);
    else if (f.endsWith('.grandchild')) grandchildren.push(pid);
  }
  // Oldest run first, by when each started: directory order is a hash's on ext4, and pids wrap.
  const started = new Map(runs.map((pid) => [pid, readRecord(dir, pid).startedAt ?? Infinity]));
  runs.sort((a, b) => started.get(a)! - started.get(b)!);
  return { runs, grandchildren };
}

export interface RunRecord {
  pid: number;
  /** When the run's process started (ms since the epoch). */
  startedAt?: number;
  argv: string[];
  cwd: string;
  stdinBytes?: number;
  stdin?: string;
  session?: 'new' | 'resume' | 'resume-refused' | 'none';
  sessionId?: string | null;
  historyTurns?: number;
}

/** The fake CLI's record of one run; empty while the fake is rewriting it. */
export function readRecord(dir: string, pid: number): RunRecord {
  try {
    return JSON.parse(readFileSync(join(dir, `${pid}.json`), 'utf8')) as RunRecord;
  } catch {
    return { pid, argv: [], cwd: '' };
  }
}

/** Request workspaces still on disk under the state dir's run dir (<run>/<key>/<request>). */
export function leftoverWorkspaces(stateDir: string): string[] {
  const run = runDirFor(stateDir);
  let keys: string[] = [];
  try {
    keys = readdirSync(run);
  } catch {
    return [];
  }
  return keys.flatMap((k) => readdirSync(join(run, k)).map((r) => join(k, r)));
}

/** Whether a CLI session file (.jsonl) under olp's state holds this text. */
export function sessionFileHolds(stateDir: string, text: string): boolean {
  const files = listTree(stateDir).filter((f) => f.endsWith('.jsonl'));
  return files.some((f) => {
    try {
      return readFileSync(join(stateDir, f), 'utf8').includes(text);
    } catch {
      return false;
    }
  });
}

/**
 * The fake CLIs of a test daemon alive under /proc, one per CLI: the process groups (olp starts
 * each CLI as a group of its own, led by a child of the daemon's process: `daemonPid`) of the
 * live processes whose environment holds this record dir (claude's or codex's). A CLI's own
 * helpers (the wrapper script's `readlink`) count with it.
 */
export function fakeCliProcesses(recordDir: string, daemonPid = process.pid): number[] {
  const marks = [`FAKE_CLAUDE_RECORD_DIR=${recordDir}\0`, `FAKE_CODEX_RECORD_DIR=${recordDir}\0`];
  const groups = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let env: string;
    let stat: string;
    try {
      env = readFileSync(`/proc/${entry}/environ`, 'latin1');
      if (!marks.some((m) => env.includes(m))) continue;
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // After the command's closing parenthesis: state, parent pid, process group.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (state === 'Z' || state === 'X') continue;
    groups.set(Number(pgrp), [...(groups.get(Number(pgrp)) ?? []), Number(entry)]);
  }
  // A scan takes a few ms: a CLI that exited meanwhile (seen early in it) does not count beside
  // one that started meanwhile (seen late).
  return [...groups].filter(([g, pids]) => pids.some(isAlive) && ledByChildOf(g, daemonPid)).map(([g]) => g);
}

/** Whether the group's leader is a child of this process, or gone (its group may linger). */
function ledByChildOf(group: number, parent: number): boolean {
  try {
    const stat = readFileSync(`/proc/${group}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent;
  } catch {
    return true;
  }
}
