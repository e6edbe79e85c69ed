import { basename } from 'node:path';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * Kills every process whose environment says `HOME=<home>` for one of the given homes, or whose
 * HOME lies under one of the given prefixes. A CLI's grandchild can leave its process group
 * (`setsid`, a detached spawn) but it keeps the environment it was started with, so this finds
 * what a group kill misses. Linux only (reads /proc); elsewhere it finds nothing.
 * Returns the pids it signalled.
 */
export function killByHome(
  match: { homes?: Iterable<string>; under?: Iterable<string> },
  signal: NodeJS.Signals = 'SIGKILL',
): number[] {
  const killed: number[] = [];
  for (const pid of findByHome(match)) {
    try {
      process.kill(pid, signal);
      killed.push(pid);
    } catch {
      // exited meanwhile
    }
  }
  return killed;
}

/** The pids whose environment says `HOME=<home>` for one of the homes, or a HOME under a prefix. */
export function findByHome(match: { homes?: Iterable<string>; under?: Iterable<string> }): number[] {
  const exact = [...(match.homes ?? [])].map((h) => Buffer.from(`HOME=${h}\0`));
  const prefixes = [...(match.under ?? [])].map((p) => Buffer.from(`HOME=${p.endsWith('/') ? p : `${p}/`}`));
  if (exact.length === 0 && prefixes.length === 0) return [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const found: number[] = [];
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
    if (matches(environ, exact, prefixes)) found.push(pid);
  }
  return found;
}

/** What /proc says of a process: its command name, resident memory and age; null when it is gone. */
export function describeProcess(pid: number): { pid: number; command: string; rssMb: number; ageS: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const uptime = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
    // Field 22 (starttime, in clock ticks since boot) counted after the ")" that ends the command name.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const startS = Number(fields[19]) / 100;
    const rss = /VmRSS:\s+(\d+) kB/.exec(status);
    // The program's name from its argv[0]: the thread name in `Name:` is not it (Node 24 calls its
    // main thread "MainThread").
    const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
    const name = argv0 ? basename(argv0) : /Name:\s+(\S+)/.exec(status)?.[1];
    return {
      pid,
      command: name ?? '?',
      rssMb: rss ? Math.round(Number(rss[1]) / 1024) : 0,
      ageS: Math.max(0, Math.round(uptime - startS)),
    };
  } catch {
    return null;
  }
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
