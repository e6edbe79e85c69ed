import { closeSync, readdirSync, readFileSync } from 'node:fs';

const O_CLOEXEC = 0o2000000;

/**
 * Closes every descriptor above stdio that this process inherited without close-on-exec, so no CLI
 * child inherits it (libuv closes only CLOEXEC ones on exec). The IPC channel named by
 * NODE_CHANNEL_FD is kept. Linux only: does nothing where /proc is absent. Call it at start, before
 * anything of olp's own is open. Returns the descriptors it closed.
 */
export function closeInheritedFds(env: Readonly<Record<string, string | undefined>> = {}): number[] {
  const keep = new Set([0, 1, 2]);
  const channel = Number(env.NODE_CHANNEL_FD);
  if (env.NODE_CHANNEL_FD !== undefined && Number.isInteger(channel)) keep.add(channel);
  let fds: number[];
  try {
    fds = readdirSync('/proc/self/fd')
      .map(Number)
      .filter((fd) => Number.isInteger(fd) && !keep.has(fd));
  } catch {
    return [];
  }
  const closed: number[] = [];
  for (const fd of fds) {
    let flags: number;
    try {
      // One line reads 'flags:\t0100002' (octal); a descriptor listed a moment ago may be gone already.
      const line = /^flags:\s*([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
      if (!line) continue;
      flags = parseInt(line[1]!, 8);
    } catch {
      continue;
    }
    if (flags & O_CLOEXEC) continue;
    try {
      closeSync(fd);
      closed.push(fd);
    } catch {
      // already closed
    }
  }
  return closed;
}
