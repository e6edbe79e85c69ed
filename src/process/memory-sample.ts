// What a live CLI costs the machine, and whether the machine is short of memory: read from /proc,
// cheaply enough to do every few seconds for each CLI olp keeps.
import { readdirSync, readFileSync } from 'node:fs';

const PAGE = 4096;

function read(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** One process's own memory in bytes: PSS from smaps_rollup, else RSS from statm; null when it is gone. */
function ownBytes(pid: number): number | null {
  const rollup = read(`/proc/${pid}/smaps_rollup`);
  const pss = rollup ? /^Pss:\s+(\d+) kB/m.exec(rollup) : null;
  if (pss) return Number(pss[1]) * 1024;
  const statm = read(`/proc/${pid}/statm`);
  const rss = statm?.split(' ')[1];
  return rss === undefined ? null : Number(rss) * PAGE;
}

/** A process's children, from each of its threads' `children` list (empty where the kernel lacks it). */
function childrenOf(pid: number): number[] {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const t of tasks)
    for (const c of (read(`/proc/${pid}/task/${t}/children`) ?? '').split(' ')) if (c.trim()) out.push(Number(c));
  return out;
}

/**
 * What a CLI holds, in bytes: the proportional set size (PSS: its private pages, and its share of
 * the pages it shares with other processes, such as the CLI's binary mapped by every one of them)
 * of the process and its descendants (an MCP server it started); RSS where smaps_rollup is
 * missing. Null when the process is gone. Costs the kernel a walk of the page tables: about
 * 1 ms for a 250 MB process, so it is sampled every few seconds, never per request.
 */
export function processMemoryBytes(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  const own = ownBytes(pid);
  if (own === null) return null;
  let total = own;
  const seen = new Set([pid]);
  const todo = childrenOf(pid);
  while (todo.length > 0 && seen.size < 64) {
    const c = todo.pop()!;
    if (seen.has(c)) continue;
    seen.add(c);
    total += ownBytes(c) ?? 0;
    todo.push(...childrenOf(c));
  }
  return total;
}

/** The memory pressure reading: `some avg10` of /proc/pressure/memory (null without PSI) and MemAvailable. */
export function memoryPressure(): { someAvg10: number | null; availableBytes: number | null } {
  const psi = read('/proc/pressure/memory');
  const some = psi ? /^some avg10=([\d.]+)/m.exec(psi) : null;
  const info = read('/proc/meminfo');
  const avail = info ? /MemAvailable:\s+(\d+) kB/.exec(info) : null;
  return { someAvg10: some ? Number(some[1]) : null, availableBytes: avail ? Number(avail[1]) * 1024 : null };
}
