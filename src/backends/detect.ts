import { delimiter, isAbsolute, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findExecutable } from '../process/index.js';
import { type Detection, type ProbeRoom, type ProbeSettings, type ProbeWorkspaces, runProbe } from './detect-probe.js';
import type { StatusProbe } from './detect-probe.js';
import type { Backend, LoginUse } from './types.js';

export type { Detection, ProbeRoom, ProbeWorkspaces, StatusProbe } from './detect-probe.js';

/** olp's own install: its `node_modules` holds the CLIs pinned for its tests, never the user's. */
const OWN_MODULES = fileURLToPath(new URL('../../../node_modules', import.meta.url));

/**
 * PATH without olp's own `node_modules/.bin` (which `npm start` and `npm run` put first): a
 * CLI name must resolve to the user's CLI, not the copy pinned for olp's test tier.
 */
export function withoutOwnBins(pathEnv: string | undefined): string {
  return (pathEnv ?? '')
    .split(delimiter)
    .filter((dir) => dir && !resolve(dir).startsWith(OWN_MODULES + sep))
    .join(delimiter);
}

/**
 * The executable a configured CLI name means, decided once at start: a path (relative ones
 * against the directory olp was started in), or a name looked up on PATH (olp's own
 * `node_modules/.bin` skipped). A name not found stays a name, reported as not installed.
 */
export function resolveBin(bin: string, pathEnv: string | undefined, cwd = process.cwd()): string {
  if (bin.includes('/')) return isAbsolute(bin) ? bin : resolve(cwd, bin);
  return findExecutable(bin, withoutOwnBins(pathEnv)) ?? bin;
}

const INSTALLED_TTL_MS = 2000;

/** Each backend's CLI as found: installed, its version and login (see `createDetector`). */
export interface Detector {
  /**
   * Full detection (spawns the CLI's status commands; cached for a while, and the last one stands
   * while they run again); `login`: with a login's credential, always asked afresh.
   */
  detect(b: Backend, login?: LoginUse): Promise<Detection>;
  /** The last finished detection while it is fresh; never spawns anything (for the request path). */
  known(b: Backend): Detection | undefined;
  /** Cheap check: is the binary there at all (a PATH scan, cached briefly: /v1/models asks per model). */
  installed(b: Backend): boolean;
}

/**
 * Detects each backend's CLI: binary on PATH, version and login via the CLI's own commands
 * (bounded by a timeout), cached briefly so /health stays cheap. The commands run exactly as a
 * real run would: the backend's allow-listed environment, in a throwaway home with only its login
 * files linked, so no host secret (API keys, tokens) and nothing else of the real home reaches them.
 */
export function createDetector(
  hostEnv: Readonly<Record<string, string | undefined>>,
  probes: ReadonlyMap<string, StatusProbe>,
  workspaces: ProbeWorkspaces,
  opts: { timeoutMs: number; ttlMs?: number; room?: ProbeRoom; signal?: AbortSignal },
): Detector {
  const { ttlMs, ...rest } = opts;
  return new CachedDetector({ hostEnv, probes, workspaces, ...rest }, ttlMs ?? 30_000);
}

/** A backend's current detection, running or finished, and when it started. */
interface Entry {
  at: number;
  value: Promise<Detection>;
  done: boolean;
}

/** The detector's caches: the current detection of each backend, the last finished one, the PATH scans. */
class CachedDetector implements Detector {
  private readonly cache = new Map<string, Entry>();
  private readonly settled = new Map<string, { at: number; value: Detection }>();
  private readonly found = new Map<string, { at: number; value: boolean }>();

  constructor(
    private readonly settings: ProbeSettings,
    private readonly ttl: number,
  ) {}

  detect(b: Backend, login?: LoginUse): Promise<Detection> {
    if (login) return runProbe(this.settings, b, login, undefined);
    let hit = this.cache.get(b.id);
    if (!hit || Date.now() - hit.at >= this.ttl) hit = this.refresh(b);
    // While the CLIs are asked again, the last answer stands: on a busy machine their status
    // commands can take seconds, and /health should not wait on them. Only the first one waits.
    const last = this.settled.get(b.id);
    return hit.done || !last ? hit.value : Promise.resolve(last.value);
  }

  known(b: Backend): Detection | undefined {
    const hit = this.settled.get(b.id);
    return hit && Date.now() - hit.at < this.ttl ? hit.value : undefined;
  }

  installed(b: Backend): boolean {
    const hit = this.found.get(b.id);
    if (hit && Date.now() - hit.at < INSTALLED_TTL_MS) return hit.value;
    const value = findExecutable(b.bin, this.settings.hostEnv.PATH) !== undefined;
    this.found.set(b.id, { at: Date.now(), value });
    return value;
  }

  /** Asks the backend's CLI again, remembered as the current detection (and, once done, the last seen). */
  private refresh(b: Backend): Entry {
    const last = this.settled.get(b.id)?.value;
    const entry = { at: Date.now(), value: runProbe(this.settings, b, undefined, last), done: false };
    this.cache.set(b.id, entry);
    void entry.value.then((d) => {
      entry.done = true;
      // Not checked (no room): asked again next time, and what was last seen stays the last seen.
      if (d.unchecked) {
        if (this.cache.get(b.id) === entry) this.cache.delete(b.id);
        return;
      }
      this.settled.set(b.id, { at: entry.at, value: d });
    });
    return entry;
  }
}
