import type { Backend } from '../backends/index.js';

export interface Route {
  /** The id the client asked for. */
  id: string;
  backend: Backend;
  cliModel: string;
}

/** Operator changes to the table: an entry adds or renames an id, `null` hides one. */
export type ModelOverrides = Readonly<Record<string, { backend: string; model: string } | null>>;

/** One listed id: its route, when it was made, and the most output tokens its replies may ask for. */
type TableEntry = Route & { created: number; maxOutputTokens?: number | undefined };

/** The model table: each backend's models, then the operator's overrides; `hidden` holds the ids they hide. */
export function toModelTable(
  backends: readonly Backend[],
  overrides: ModelOverrides,
): { table: Map<string, TableEntry>; hidden: Set<string> } {
  const table = new Map<string, TableEntry>();
  for (const backend of backends) {
    for (const m of backend.models)
      table.set(m.id, {
        id: m.id,
        backend,
        cliModel: m.cliModel,
        created: m.created,
        maxOutputTokens: m.maxOutputTokens,
      });
  }
  const hidden = new Set<string>();
  for (const [id, entry] of Object.entries(overrides)) {
    if (entry === null) {
      table.delete(id);
      hidden.add(id);
      continue;
    }
    const backend = backends.find((b) => b.id === entry.backend);
    // An operator's id for a model the backend lists takes that model's output cap.
    const maxOutputTokens = backend?.models.find((m) => m.cliModel === entry.model)?.maxOutputTokens;
    if (backend) table.set(id, { id, backend, cliModel: entry.model, created: 0, maxOutputTokens });
  }
  return { table, hidden };
}
