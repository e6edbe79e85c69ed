// The real nginx for the front-door tests and bench: found in PATH or /usr/sbin (a non-root PATH often
// lacks it), run unprivileged in a temporary prefix on a free loopback port, stopped with SIGTERM and
// awaited (SIGQUIT would wait for streams still open).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

export const NGINX_MISSING = 'nginx not installed (apt-get install -y --no-install-recommends nginx)';

/** The nginx binary, or undefined. */
export function findNginx(): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin'];
  return dirs.map((d) => join(d, 'nginx')).find((p) => p.startsWith('/') && existsSync(p));
}

/** A port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** `nginx -t` on a config: its exit status and what it said. */
export function checkNginxConfig(nginx: string, conf: string): { ok: boolean; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'olp-nginx-t-'));
  try {
    writeFileSync(join(dir, 'nginx.conf'), conf);
    const r = spawnSync(nginx, ['-t', '-q', '-p', `${dir}/`, '-c', 'nginx.conf'], { encoding: 'utf8' });
    return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface RunningNginx {
  dir: string;
  child: ChildProcess;
  stderr(): string;
  /** SIGTERM, awaited; then the prefix removed. */
  stop(): Promise<void>;
}

/** Runs nginx on this config in the foreground; resolves once `probeUrl` answers. */
export async function startNginx(nginx: string, conf: string, probeUrl: string): Promise<RunningNginx> {
  const dir = mkdtempSync(join(tmpdir(), 'olp-nginx-'));
  writeFileSync(join(dir, 'nginx.conf'), conf);
  const child = spawn(nginx, ['-p', `${dir}/`, '-c', 'nginx.conf', '-g', 'daemon off;'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (b: Buffer) => (err += b.toString('utf8')));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const end = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`nginx exited ${child.exitCode}: ${err}`);
    }
    try {
      await fetch(probeUrl, { signal: AbortSignal.timeout(1000) });
      break;
    } catch {
      if (Date.now() > end) {
        await stop();
        throw new Error(`nginx did not answer at ${probeUrl}: ${err}`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  return { dir, child, stderr: () => err, stop };
}
