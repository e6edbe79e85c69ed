import { modelNotFound } from '../errors/index.js';
import type { Backend } from '../backends/types.js';

export interface Route {
  /** The id the client asked for. */
  id: string;
  backend: Backend;
  cliModel: string;
}

export interface ModelInfo {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

/** Maps public model ids and aliases to a backend and the CLI's own model name. */
export function createModelRegistry(backends: readonly Backend[]) {
  const table = new Map<string, Route & { created: number }>();
  for (const backend of backends) {
    for (const m of backend.models) table.set(m.id, { id: m.id, backend, cliModel: m.cliModel, created: m.created });
  }
  const ids = [...table.keys()];

  return {
    /** The route for a model id, or a 404 `model_not_found` that lists valid ids. */
    resolve(id: string): Route {
      const hit = table.get(id);
      if (hit) return { id, backend: hit.backend, cliModel: hit.cliModel };
      const backend = backends.find((b) => b.acceptsModel(id));
      if (backend) return { id, backend, cliModel: id };
      throw modelNotFound(id, ids);
    },
    list(): ModelInfo[] {
      return [...table.values()].map((r) => ({ id: r.id, object: 'model', created: r.created, owned_by: r.backend.owner }));
    },
    /** One model's listing; pass-through ids are listed as their backend's. */
    get(id: string): ModelInfo {
      const hit = table.get(id);
      if (hit) return { id, object: 'model', created: hit.created, owned_by: hit.backend.owner };
      const route = this.resolve(id);
      return { id, object: 'model', created: 0, owned_by: route.backend.owner };
    },
  };
}

export type ModelRegistry = ReturnType<typeof createModelRegistry>;
