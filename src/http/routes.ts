import type { WorkerPool } from '../workers/index.js';
import type { Request, Response } from 'express';
import type { Admission } from '../admit/index.js';
import { authenticate, authorizationOf, type Instance } from '../auth/index.js';
import { memoryInfo, starterInfo } from '../process/index.js';
import type { Backend, Detector } from '../backends/index.js';
import type { ModelInfo, ModelRegistry } from '../models/index.js';
import type { Store } from '../store/index.js';
import { ctx } from './context.js';
import { mapModel } from '../wire/index.js';
import type { Lifecycle } from './lifecycle.js';

export interface RouteDeps {
  store: Store;
  registry: ModelRegistry;
  backends: readonly Backend[];
  lifecycle: Lifecycle;
  admission: Admission;
  detector: Detector;
  /** Live workers, when the daemon keeps them. */
  workers?: WorkerPool | undefined;
  /** Every CLI process olp holds (turns, workers, spares, parked turns, ones being stopped) and its cap. */
  processes?: { readonly live: number; readonly max: number; readonly waiting: number } | undefined;
  /** Turns waiting, their CLI alive, for the client's tool results. */
  parked?: { readonly size: number; readonly ttlMs: number } | undefined;
  /** This instance's tag and its peers behind the same front door. */
  instance?: Instance | undefined;
}

/** Key auth (a bearer token, or `x-api-key`) for everything under /v1; puts the principal in the request context. */
export function createAuth(deps: RouteDeps) {
  return (req: Request, res: Response, next: () => void): void => {
    ctx(res).principal = authenticate(authorizationOf(req.headers), deps.store.keys, deps.instance);
    next();
  };
}

/** A model as Anthropic lists it (`GET /v1/models` with an `anthropic-version` header). */
function toAnthropicModel(m: ModelInfo): { type: 'model'; id: string; display_name: string; created_at: string } {
  return { type: 'model', id: m.id, display_name: m.id, created_at: new Date(m.created * 1000).toISOString() };
}

/**
 * GET /v1/models and /v1/models/:id: OpenAI's shapes, or Anthropic's for a request that carries
 * `anthropic-version`; for such a request an id `anthropicModels` maps is found as its target is.
 */
export function createModelsRoutes(
  deps: RouteDeps & { anthropicModels?: Readonly<Record<string, string>> | undefined },
) {
  const anthropic = (req: Request) => req.headers['anthropic-version'] !== undefined;
  return {
    list(req: Request, res: Response): void {
      const data = deps.registry.list();
      if (!anthropic(req)) {
        res.json({ object: 'list', data });
        return;
      }
      res.json({
        data: data.map(toAnthropicModel),
        has_more: false,
        first_id: data[0]?.id ?? null,
        last_id: data.at(-1)?.id ?? null,
      });
    },
    get(req: Request, res: Response): void {
      const id = String(req.params.id);
      if (!anthropic(req)) {
        res.json(deps.registry.get(id));
        return;
      }
      res.json(toAnthropicModel({ ...deps.registry.get(mapModel(id, deps.anthropicModels)), id }));
    },
  };
}

/**
 * GET /health: without a key (or with a member's) only whether olp is up and ready; an owner's key
 * also gets each backend's CLI (path, version, login) and the load. A key that is sent must be valid.
 */
export function createHealthRoute(deps: RouteDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const header = authorizationOf(req.headers);
    const principal = header === undefined ? undefined : authenticate(header, deps.store.keys, deps.instance);
    const found = await Promise.all(deps.backends.map((b) => deps.detector.detect(b)));
    const ok = found.some((d) => d.ready);
    const status = deps.lifecycle.draining ? 'draining' : ok ? 'ok' : 'degraded';
    res.status(deps.lifecycle.draining ? 503 : 200);
    if (principal?.role !== 'owner') {
      res.json({ status });
      return;
    }
    res.json({
      status,
      instance: { tag: deps.instance?.tag ?? null, peers: deps.instance?.peers ?? {} },
      backends: Object.fromEntries(
        found.map((d) => [
          d.backend,
          {
            found: d.path !== null,
            path: d.path,
            version: d.version,
            login: d.login,
            ready: d.ready,
            ...(d.unchecked ? { unchecked: d.unchecked } : {}),
          },
        ]),
      ),
      inflight: deps.lifecycle.inflight,
      cli: deps.admission.stats(),
      processes: deps.processes
        ? { live: deps.processes.live, max: deps.processes.max, waiting: deps.processes.waiting }
        : undefined,
      workers: deps.workers
        ? { max: deps.workers.max, memory: deps.workers.memory(), live: deps.workers.list() }
        : { max: 0, live: [] },
      parked: deps.parked
        ? { turns: deps.parked.size, timeoutS: Math.round(deps.parked.ttlMs / 1000) }
        : { turns: 0, timeoutS: 0 },
      spawn: starterInfo(),
      memory: memoryInfo(),
    });
  };
}
