import type { AddressInfo } from 'node:net';
import type { Detection } from './backends/index.js';
import { createHttpServer, expressMessages } from './http/index.js';
import { composeDaemon, type DaemonOptions } from './serve.js';
import type { Store } from './store/index.js';

export interface Daemon {
  /** `http://host:port` (the API is under `/v1`). */
  url: string;
  port: number;
  store: Store;
  /** Number of live CLI children. */
  readonly children: number;
  /** Each backend's CLI as olp will run it: path, version, login, readiness (cached briefly). */
  detect(): Promise<Detection[]>;
  /** Resolves once every workspace removal in progress has finished. */
  settled(): Promise<void>;
  /** Stops taking requests, lets in-flight ones finish within the grace, kills the rest, closes the store. */
  close(): Promise<void>;
}

/** Composes the daemon and listens; its close() drains requests within the grace, then lets go of everything. */
export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  const { config, logger } = options;
  const parts = composeDaemon(options);
  const { app, store, workspaces, supervisor, lifecycle, backends, detector, bridge, lock } = parts;
  const server = createHttpServer(app, {
    bodyTimeoutMs: config.bodyTimeout * 1000,
    maxClientConnections: config.maxClientConnections,
    messages: expressMessages(app),
  });
  try {
    await bridge.start();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    // Not listening (the port is taken): nothing was served; let go of what composing opened.
    await parts.close().catch(() => undefined);
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host}:${port}`;
  lock.publish({ port, url, version: options.version ?? null });

  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    store,
    get children() {
      return supervisor.active;
    },
    detect: () => Promise.all(backends.map((b) => detector.detect(b))),
    settled: () => workspaces.settled(),
    close() {
      closing ??= (async () => {
        lifecycle.drain();
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        const grace = new Promise<'grace'>((resolve) =>
          setTimeout(() => resolve('grace'), config.shutdownGrace * 1000).unref(),
        );
        if ((await Promise.race([lifecycle.idle().then(() => 'idle' as const), grace])) === 'grace') {
          logger.warn(
            { event: 'shutdown_kill', inflight: lifecycle.inflight, children: supervisor.active },
            'grace period over; stopping CLI children',
          );
        }
        await parts.stopChildren();
        await Promise.race([lifecycle.idle(), new Promise((r) => setTimeout(r, 2000).unref())]);
        server.closeAllConnections();
        await stopped;
        await parts.close();
      })();
      return closing;
    },
  };
}
