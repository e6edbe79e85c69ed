import type { Request, Response } from 'express';
import { responseNotFound } from '../errors/index.js';
import type { Store } from '../store/index.js';
import { ctx } from './context.js';

/** GET, DELETE /v1/responses/{id} and GET /v1/responses/{id}/input_items, for the key that made it. */
export function createStoredResponseRoutes(store: Store) {
  const find = (req: Request, res: Response) => {
    const id = String(req.params.id);
    const r = store.responses.get(ctx(res).principal!.keyId, id);
    if (!r) throw responseNotFound(id, null);
    return r;
  };
  return {
    get(req: Request, res: Response): void {
      res.json(find(req, res).body);
    },
    remove(req: Request, res: Response): void {
      const r = find(req, res);
      store.responses.delete(r.keyId, r.id);
      res.json({ id: r.id, object: 'response', deleted: true });
    },
    inputItems(req: Request, res: Response): void {
      const r = find(req, res);
      const data = (r.items as Record<string, unknown>[]).map((item, i) => ({
        id: `msg_${r.id.slice(5, 37)}${String(i).padStart(4, '0')}`,
        ...item,
        status: 'completed',
      }));
      const ordered = req.query.order === 'asc' ? data : data.reverse();
      res.json({
        object: 'list',
        data: ordered,
        first_id: ordered[0]?.id ?? null,
        last_id: ordered.at(-1)?.id ?? null,
        has_more: false,
      });
    },
  };
}
