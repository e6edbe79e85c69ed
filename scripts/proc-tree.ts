// olp's process tree from /proc, for the scripts that measure it from outside: the CPU of a
// process and everything under it (live processes' own, reaped ones' through their parents'
// counters) and their summed resident memory.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
const PAGE_KB = (Number(execFileSync('getconf', ['PAGESIZE'], { encoding: 'utf8' }).trim()) || 4096) / 1024;

// --- olp's process tree, from /proc ----------------------------------------------------------

interface Proc {
  ppid: number;
  /** user + system CPU of the process itself, and of the children it has reaped, in ms. */
  ownMs: number;
  reapedMs: number;
  rssKb: number;
}

function readProcs(): Map<number, Proc> {
  const procs = new Map<number, Proc>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      procs.set(Number(name), {
        ppid: Number(f[1]),
        ownMs: ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK,
        reapedMs: ((Number(f[13]) + Number(f[14])) * 1000) / CLK_TCK,
        rssKb: Number(f[21]) * PAGE_KB,
      });
    } catch {
      // gone meanwhile
    }
  }
  return procs;
}

export interface TreeSample {
  /** CPU of the root and everything under it, reaped or live, in ms. */
  cpuMs: number;
  /** The root's own (olp's daemon without its CLIs), in ms. */
  rootMs: number;
  /** Summed RSS of the root and of the processes under it, in MB. */
  rssMb: number;
  cliRssMb: number;
  clis: number;
}

/** One look at the tree under `root` (a process reaped between two looks counts in its parent's). */
export function sampleTree(root: number): TreeSample {
  const procs = readProcs();
  const children = new Map<number, number[]>();
  for (const [pid, p] of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), pid]);
  const sample: TreeSample = { cpuMs: 0, rootMs: procs.get(root)?.ownMs ?? 0, rssMb: 0, cliRssMb: 0, clis: 0 };
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    const p = procs.get(pid);
    if (!p) continue;
    sample.cpuMs += p.ownMs + p.reapedMs;
    sample.rssMb += p.rssKb / 1024;
    if (pid !== root) {
      sample.cliRssMb += p.rssKb / 1024;
      if (p.ppid === root) sample.clis++;
    }
    queue.push(...(children.get(pid) ?? []));
  }
  return sample;
}
