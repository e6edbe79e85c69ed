import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDetector, type Detection } from '../backends/index.js';
import type { Config } from '../config/index.js';
import { createBackends } from '../serve.js';
import { createWorkspaces } from '../workspace/index.js';

/** Whether host:port can be bound right now. */
function portFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, host, () => s.close(() => resolve(true)));
  });
}

function stateDirCheck(dir: string): { ok: boolean; text: string; fix?: string } {
  try {
    const st = statSync(dir);
    const mode = st.mode & 0o777;
    if (!st.isDirectory()) return { ok: false, text: `${dir} is not a directory`, fix: `mv ${dir} ${dir}.bak` };
    if (mode & 0o077) return { ok: false, text: `${dir} is mode ${mode.toString(8)}, readable by others`, fix: `chmod 700 ${dir}` };
    return { ok: true, text: `${dir} (mode 700)` };
  } catch {
    return { ok: true, text: `${dir} (not created yet; olp creates it with mode 700)` };
  }
}

const LOGIN: Record<Detection['login'], string> = { logged_in: 'logged in', api_key: 'API key', not_logged_in: 'NOT logged in', unknown: '-' };

/** `olp doctor`: a readable report on every backend and the state; exit 1 when no backend can serve. */
export async function runDoctor(config: Config, hostEnv: Readonly<Record<string, string | undefined>>, out: (s: string) => void): Promise<number> {
  const { backends, probes } = createBackends(config, hostEnv);
  // The probes run in throwaway homes under a private (0700) temp dir: the state dir may not exist yet.
  const scratch = mkdtempSync(join(tmpdir(), 'olp-probe-'));
  let found: Detection[];
  try {
    const detector = createDetector(hostEnv, probes, createWorkspaces(scratch), { ttlMs: 0 });
    found = await Promise.all(backends.map((b) => detector.detect(b)));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const rows = [['BACKEND', 'BINARY', 'VERSION', 'LOGIN', 'CREDENTIALS', 'READY']];
  for (const d of found) {
    const creds = d.credentials.map((c) => `${c.file} (${c.exists ? 'found' : 'missing'})`).join(', ');
    rows.push([d.backend, d.path ?? `not found (${d.bin})`, d.version ?? '-', d.path ? LOGIN[d.login] : '-', creds, d.ready ? 'yes' : 'no']);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  out(rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n') + '\n\n');

  const state = stateDirCheck(config.stateDir);
  const free = await portFree(config.host, config.port);
  out(`state dir  ${state.ok ? 'ok' : 'PROBLEM'}  ${state.text}\n`);
  out(`port       ${free ? 'ok' : 'IN USE'}  ${config.host}:${config.port}${free ? ' is free' : ' is taken (fine if olp already runs there; otherwise pick another with --port)'}\n`);

  const fixes = [...found.flatMap((d) => d.fixes.map((f) => `${d.backend}: ${f}`)), ...(state.fix ? [`state dir: ${state.fix}`] : [])];
  for (const d of found) {
    if (d.path && d.login !== 'api_key' && d.credentials.some((c) => !c.exists) && d.login === 'logged_in') {
      fixes.push(`${d.backend}: the login is not in the file olp links (${d.credentials.map((c) => c.file).join(', ')}); point --${d.backend === 'claude' ? 'claude-credentials' : 'codex-auth'} at it`);
    }
  }
  if (fixes.length > 0) out(`\nTo fix:\n${fixes.map((f) => `  ${f}`).join('\n')}\n`);
  const ready = found.filter((d) => d.ready && d.path);
  out(ready.length > 0 ? `\nolp can serve: ${ready.map((d) => d.backend).join(', ')}\n` : '\nNo backend can serve requests yet.\n');
  return ready.length > 0 ? 0 : 1;
}
