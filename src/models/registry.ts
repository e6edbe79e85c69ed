import { modelNotFound } from '../errors/index.js';
import type { Backend } from '../backends/index.js';
import { type ModelOverrides, type Route, toModelTable } from './table.js';

export interface ModelInfo {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

/**
 * One table mapping public model ids and aliases to a backend and the CLI's own model name,
 * built from each backend's models plus the operator's overrides.
 */
export function createModelRegistry(
  backends: readonly Backend[],
  overrides: ModelOverrides = {},
  isAvailable: (b: Backend) => boolean = () => true,
) {
  const { table, hidden } = toModelTable(backends, overrides);
  return {
    /** The route for a model id, or a 404 `model_not_found` that lists valid ids. */
    resolve(id: string): Route {
      const hit = table.get(id);
      if (hit) return { id, backend: hit.backend, cliModel: hit.cliModel };
      // Unlisted ids are passed through only to a backend whose CLI is installed.
      const backend = hidden.has(id) ? undefined : backends.find((b) => b.acceptsModel(id) && isAvailable(b));
      if (backend) return { id, backend, cliModel: id };
      // A few ids of each backend, so the message shows what each CLI offers.
      const listed = this.list();
      const some = backends.flatMap((b) =>
        listed
          .filter((m) => m.owned_by === b.owner)
          .slice(0, 3)
          .map((m) => m.id),
      );
      throw modelNotFound(id, some);
    },
    /** The most output tokens a reply of this model may ask for; undefined for an id the table does not list. */
    outputCap(id: string): number | undefined {
      return table.get(id)?.maxOutputTokens;
    },
    /** Whether an id is one of the table's own (not a pass-through id a client made up). */
    listed(id: string): boolean {
      return table.has(id);
    },
    /** Models whose backend's CLI is installed. */
    list(): ModelInfo[] {
      return [...table.values()]
        .filter((r) => isAvailable(r.backend))
        .map((r) => ({ id: r.id, object: 'model', created: r.created, owned_by: r.backend.owner }));
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
