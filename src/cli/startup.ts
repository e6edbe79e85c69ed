import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import type { Detection } from '../backends/index.js';
import { toReadinessLines } from './readiness.js';

/** Hosts that bind every interface: the URL with them in it works on no other device. */
const WILDCARD = new Set(['0.0.0.0', '::', '[::]']);

/**
 * The URLs other devices can use when olp binds every interface: non-internal IPv4 first, then
 * (for `::`) global IPv6; link-local IPv6 needs a zone id no client URL carries, so it is left out.
 */
export function toLanUrls(
  host: string,
  port: number,
  interfaces: NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces(),
): string[] {
  if (!WILDCARD.has(host)) return [];
  const all = Object.values(interfaces)
    .flatMap((list) => list ?? [])
    .filter((i) => !i.internal);
  const v4 = all.filter((i) => i.family === 'IPv4').map((i) => `http://${i.address}:${port}/v1`);
  const v6 =
    host === '0.0.0.0'
      ? []
      : all
          .filter((i) => i.family === 'IPv6' && !i.address.toLowerCase().startsWith('fe80:'))
          .map((i) => `http://[${i.address}]:${port}/v1`);
  return [...new Set([...v4, ...v6])];
}

export interface StartupFacts {
  port: number;
  host: string;
  /** null when olp replays a recording and no CLI runs. */
  detections: Detection[] | null;
  /** The command that creates a key, as the user can run it; null when a key exists. */
  addKey: string | null;
}

/**
 * The lines `olp serve` prints to stderr for a person once it listens: which CLIs will answer, where, and what
 * to do next.
 */
export function toStartupText(f: StartupFacts): string {
  const lines: string[] = [];
  if (f.detections === null) {
    lines.push('Replaying a recording: answers come from it and no CLI runs.');
  } else {
    lines.push('CLIs:', ...toReadinessLines(f.detections).map((l) => `  ${l}`));
    if (!f.detections.some((d) => d.ready && d.path))
      lines.push('No CLI can answer yet: every request will fail until one above is fixed (olp keeps running).');
  }
  if (WILDCARD.has(f.host)) {
    const urls = toLanUrls(f.host, f.port);
    lines.push(
      urls.length > 0
        ? 'Other devices can reach olp at:'
        : 'No network address besides loopback was found; on this machine use:',
      ...(urls.length > 0 ? urls : [`http://127.0.0.1:${f.port}/v1`]).map((u) => `  ${u}`),
    );
  }
  if (f.addKey) lines.push('No API key yet: every request gets 401. Create one with:', `  ${f.addKey}`);
  return `${lines.join('\n')}\n`;
}
