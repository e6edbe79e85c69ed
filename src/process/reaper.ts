import { readdirSync, readFileSync } from 'node:fs';

/**
 * Kills every process whose environment says `HOME=<home>` for one of the given homes, or whose
 * HOME lies under one of the given prefixes. A CLI's grandchild can leave its process group
 * (`setsid`, a detached spawn) but it keeps the environment it was started with, so this finds
 * what a group kill misses. Linux only (reads /proc); elsewhere it finds nothing.
 * Returns the pids it signalled.
 */
export function killByHome(match: { homes?: Iterable<string>; under?: Iterable<string> }, signal: NodeJS.Signals = 'SIGKILL'): number[] {
  const exact = [...(match.homes ?? [])].map((h) => Buffer.from(`HOME=${h}\0`));
  const prefixes = [...(match.under ?? [])].map((p) => Buffer.from(`HOME=${p.endsWith('/') ? p : `${p}/`}`));
  if (exact.length === 0 && prefixes.length === 0) return [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const killed: number[] = [];
  for (const name of entries) {
    const c = name.charCodeAt(0);
    if (c < 48 || c > 57) continue; // not a pid
    const pid = Number(name);
    if (pid === process.pid || pid <= 1) continue;
    let environ: Buffer;
    try {
      environ = readFileSync(`/proc/${name}/environ`);
    } catch {
      continue; // gone, or another user's
    }
    if (!matches(environ, exact, prefixes)) continue;
    try {
      process.kill(pid, signal);
      killed.push(pid);
    } catch {
      // exited meanwhile
    }
  }
  return killed;
}

/** True when one of the NUL-separated entries equals an exact needle or starts with a prefix. */
function matches(environ: Buffer, exact: Buffer[], prefixes: Buffer[]): boolean {
  for (const needle of exact) {
    const i = environ.indexOf(needle);
    if (i === 0 || (i > 0 && environ[i - 1] === 0)) return true;
  }
  for (const prefix of prefixes) {
    let i = environ.indexOf(prefix);
    while (i !== -1) {
      if (i === 0 || environ[i - 1] === 0) return true;
      i = environ.indexOf(prefix, i + 1);
    }
  }
  return false;
}

/**
 * Collects the homes of finished runs and scans /proc for their leftovers at most once per
 * `intervalMs`, so a busy daemon pays one scan a second rather than one per request.
 */
export function createReaper(intervalMs = 1000) {
  let pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;

  function flush(): number[] {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const homes = pending;
    pending = new Set();
    return killByHome({ homes });
  }

  return {
    /** Queues a finished run's home for the next scan. */
    later(home: string): void {
      pending.add(home);
      if (!timer) {
        timer = setTimeout(flush, intervalMs);
        timer.unref();
      }
    },
    /** Kills what still runs with this home right away (something holds the run's stdout). */
    now(home: string): number[] {
      pending.delete(home);
      return killByHome({ homes: [home] });
    },
    /** Scans for every queued home at once (shutdown). */
    flush,
  };
}

export type Reaper = ReturnType<typeof createReaper>;
