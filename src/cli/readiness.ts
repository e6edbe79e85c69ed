import type { Detection } from '../backends/index.js';
import { shellWord } from './invocation.js';
import { toStatusTimeoutText } from '../logins/index.js';

export const LOGIN: Record<Detection['login'], string> = {
  logged_in: 'logged in',
  api_key: 'API key or token',
  not_logged_in: 'NOT logged in',
  unknown: '-',
};

export { toStatusTimeoutText };

/**
 * A fix as printed, runnable as it stands: the CLI's own command (`claude auth login`) names the
 * binary olp resolved, which need not be on the user's PATH (`/opt/x/bin/claude auth login`).
 */
export function toRunnableFix(d: Detection, fix: string): string {
  if (!d.path) return fix;
  const name = d.backend;
  return fix === name || fix.startsWith(`${name} `) ? `${shellWord(d.path)}${fix.slice(name.length)}` : fix;
}

/** How olp found the binary: a name looked up on PATH, or a path given as it is. */
export function toFoundBy(d: Detection, configured: string | undefined): string {
  if (!d.path) return '-';
  return configured !== undefined && !configured.includes('/') ? `'${configured}' on PATH` : 'configured path';
}

function toState(d: Detection, fixes: string): string {
  switch (d.login) {
    case 'logged_in':
      return 'ready (logged in)';
    case 'api_key':
      return 'ready (API key or token)';
    case 'not_logged_in':
      return `NOT logged in; log in with: ${fixes}`;
    case 'unknown':
      return d.loginTimeout
        ? `${toStatusTimeoutText(d.backend, d.loginTimeout.command, d.loginTimeout.seconds)} (requests will tell)`
        : 'login unknown (its status command failed); requests will tell';
  }
}

/** One aligned line per CLI for `olp serve`'s start: the binary, its version, and whether it can answer. */
export function toReadinessLines(found: readonly Detection[]): string[] {
  const rows = found.map((d) => {
    const fixes = d.fixes.map((f) => toRunnableFix(d, f)).join('; ');
    if (!d.path) {
      const missing = d.bin.includes('/') ? `nothing runnable at ${d.bin}` : `no '${d.bin}' on PATH`;
      return [d.backend, `not installed (${missing}); install it with: ${fixes}`];
    }
    return [d.backend, d.path, d.version ?? 'version unknown', toState(d, fixes)];
  });
  const widths = [0, 1, 2].map((i) => Math.max(0, ...rows.filter((r) => r.length > i + 1).map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i < r.length - 1 ? c.padEnd(widths[i]!) : c)).join('  '));
}
