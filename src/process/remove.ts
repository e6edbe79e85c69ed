import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { findExecutable, startChild } from './start.js';

/** Most directories (or prunes) one process takes. */
const BATCH_MAX = 256;

interface Job {
  dir: string;
  /** Set for a prune: delete only the entries under `dir` whose name contains it. */
  name?: string;
  done: () => void;
}

/** The PATH `rm` and `find` are looked up on when the daemon's is not passed in. */
const FALLBACK_PATH = '/usr/bin:/bin';

/** Runs a short command quietly; false when it could not be started. */
async function runQuiet(name: string, args: string[], PATH: string, resolved: Map<string, string>): Promise<boolean> {
  let command = resolved.get(name);
  if (command === undefined) {
    command = findExecutable(name, PATH) ?? name;
    if (command !== name) resolved.set(name, command);
  }
  // Started like a CLI (posix_spawn where the native starter is built): a fork of the daemon
  // for every batch would copy its page tables.
  const child = startChild({ command, args, env: { PATH }, cwd: '/' });
  for (const s of [child.stdin, child.stdout, child.stderr]) s?.on('error', () => {});
  child.stdin?.end();
  child.stdout?.resume();
  child.stderr?.resume();
  return !('spawnError' in (await child.exited));
}

/** The entries under `dir` (at any depth) whose name contains `name`, outermost first. */
async function matching(dir: string, name: string): Promise<string[]> {
  try {
    const all = (await readdir(dir, { recursive: true })).filter((p) => p.split('/').pop()!.includes(name)).sort();
    return all.filter((p, i) => !all.slice(0, i).some((q) => p.startsWith(`${q}/`))).map((p) => join(dir, p));
  } catch {
    return [];
  }
}

/**
 * Deletes directory trees, and a finished session's files, in batches: what is queued within
 * `windowMs` goes to one `rm -rf` process (and one `find` for the prunes). On Node 20 `fs.rm`
 * walks a tree in JavaScript (a promise per entry: about a sixth of olp's per-request CPU in the
 * profile); one small native process for many trees costs less. Falls back to `fs` where the
 * commands cannot be started. `path` is the daemon's PATH, where the commands are looked up.
 */
export function createTreeRemover(windowMs = 200, path: string = FALLBACK_PATH) {
  /** Where `rm` and `find` are, looked up on PATH once (each lookup stats every PATH entry). */
  const resolved = new Map<string, string>();
  const queue: Job[] = [];
  let timer: NodeJS.Timeout | undefined;
  let useCommands = true;

  async function removeWithFs(dirs: string[]): Promise<void> {
    await Promise.allSettled(dirs.map((d) => rm(d, { recursive: true, force: true, maxRetries: 3 })));
  }

  async function remove(dirs: string[]): Promise<void> {
    if (dirs.length === 0) return;
    if (useCommands && (await runQuiet('rm', ['-rf', '--', ...dirs], path, resolved))) return;
    useCommands = false;
    await removeWithFs(dirs);
  }

  async function prune(jobs: Job[]): Promise<void> {
    if (jobs.length === 0) return;
    const dirs = [...new Set(jobs.map((j) => j.dir))];
    const names = [...new Set(jobs.map((j) => j.name!))];
    // Session ids are unique, so one pass over every directory with every name is exact.
    const tests = names.flatMap((n, i) => [...(i > 0 ? ['-o'] : []), '-name', `*${n}*`]);
    const findArgs = [...dirs, '(', ...tests, ')', '-prune', '-exec', 'rm', '-rf', '--', '{}', '+'];
    if (useCommands && (await runQuiet('find', findArgs, path, resolved))) return;
    useCommands = false;
    await removeWithFs((await Promise.all(jobs.map((j) => matching(j.dir, j.name!)))).flat());
  }

  function flush(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    while (queue.length > 0) {
      const batch = queue.splice(0, BATCH_MAX);
      const trees = batch.filter((j) => j.name === undefined).map((j) => j.dir);
      void Promise.allSettled([remove(trees), prune(batch.filter((j) => j.name !== undefined))]).then(() => {
        for (const j of batch) j.done();
      });
    }
  }

  function enqueue(job: Omit<Job, 'done'>): Promise<void> {
    return new Promise((done) => {
      queue.push({ ...job, done });
      if (queue.length >= BATCH_MAX) flush();
      else timer ??= setTimeout(flush, windowMs);
    });
  }

  return {
    /** Queues a tree for deletion; resolves once it is gone (or could not be deleted). */
    remove: (dir: string) => enqueue({ dir }),
    /**
     * Queues the deletion of every entry under `dir` whose name contains `name` (a session id:
     * letters, digits and dashes only); resolves once done.
     */
    prune: (dir: string, name: string) => enqueue({ dir, name }),
    /** Starts deleting whatever is queued now. */
    flush,
  };
}

export type TreeRemover = ReturnType<typeof createTreeRemover>;
