import { readFileSync } from 'node:fs';
import { freemem } from 'node:os';

/** Resident memory of a process in MB, from /proc; null when it is gone. */
export function rssMb(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/** Memory the system can still hand out (MemAvailable), in bytes. */
export function availableMemory(): number {
  try {
    const m = /MemAvailable:\s+(\d+) kB/.exec(readFileSync('/proc/meminfo', 'utf8'));
    if (m) return Number(m[1]) * 1024;
  } catch {
    // not Linux
  }
  return freemem();
}

/**
 * `availableMemory()` read at most every `maxAgeMs` (one reader per daemon): a pre-start after
 * every request asks, and /proc/meminfo is the kernel adding up its counters each time (about 30 µs).
 */
export function createMemoryGauge(maxAgeMs = 500): () => number {
  let seen = { at: -Infinity, bytes: 0 };
  return () => {
    const now = performance.now();
    if (now - seen.at >= maxAgeMs) seen = { at: now, bytes: availableMemory() };
    return seen.bytes;
  };
}

/** The memory-derived default for `--max-workers`: ~300 MiB each from half the machine, at most 4 per core. */
export function defaultMaxWorkers(totalBytes: number, cpus: number): number {
  return Math.max(0, Math.min(Math.floor(totalBytes / 2 / (300 * 1024 * 1024)), cpus * 4));
}
