import { createRequire } from 'node:module';

/** olp's native addon (src/native/spawn.c). */
export interface NativeAddon {
  start(
    file: string,
    argv: string[],
    envp: string[],
    cwd: string,
    onExit: (code: number | null, signal: number | null) => void,
  ): number[] | number;
  supported(): boolean;
  /** kill(2): 0, or -errno. */
  signal(pid: number, signal: number): number;
  /**
   * mallopt(M_ARENA_MAX, n); false where the C library has no such setting (absent from an addon built by
   * an older olp).
   */
  limitArenas?(n: number): boolean;
}

/** How CLI processes are started here: `posix_spawn` (the native starter) or Node's `child_process.spawn`. */
export interface StarterInfo {
  kind: 'posix_spawn' | 'node';
  /** Why the native starter is not in use, when it is not. */
  reason?: string;
}

const ADDON = '../../../src/native/build/Release/olp_spawn.node';

let loaded: { native?: NativeAddon; info: StarterInfo } | undefined;

/**
 * The addon, loaded once, when this platform has it and `OLP_NATIVE_SPAWN` does not turn it off.
 * The first call decides: the bin makes it with its environment before anything is started.
 * A process-wide cache on purpose: an addon cannot be unloaded, and it never changes once loaded.
 */
export function nativeAddon(env: Readonly<Record<string, string | undefined>> = {}): {
  native?: NativeAddon;
  info: StarterInfo;
} {
  return (loaded ??= load(env));
}

function load(env: Readonly<Record<string, string | undefined>>): { native?: NativeAddon; info: StarterInfo } {
  if (env.OLP_NATIVE_SPAWN === '0') return { info: { kind: 'node', reason: 'turned off (OLP_NATIVE_SPAWN=0)' } };
  if (process.platform !== 'linux') return { info: { kind: 'node', reason: `not built for ${process.platform}` } };
  try {
    const native = createRequire(import.meta.url)(ADDON) as NativeAddon;
    if (!native.supported()) return { info: { kind: 'node', reason: 'this kernel has no pidfd_open (Linux 5.3+)' } };
    return { native, info: { kind: 'posix_spawn' } };
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND';
    return {
      info: {
        kind: 'node',
        reason: missing
          ? 'the native starter was not built (npm run build:native)'
          : `the native starter did not load: ${(err as Error).message}`,
      },
    };
  }
}
