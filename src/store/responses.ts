import type { Database } from 'better-sqlite3';

/** A stored Responses API response: what `previous_response_id`, retrieve and `input_items` read. */
export interface StoredResponse {
  id: string;
  keyId: string;
  /** ms since the epoch. */
  createdAt: number;
  previousResponseId: string | null;
  /** This request's input items (as `input_items` lists them), without their ids. */
  items: unknown[];
  /** The same input as conversation messages (what a continuation replays). */
  messages: unknown[];
  /** The reply text (an empty string for a failed response). */
  outputText: string;
  /** The Response object as sent. */
  body: Record<string, unknown>;
}

interface Row {
  id: string;
  key_id: string;
  created_at: number;
  previous_response_id: string | null;
  items: string;
  messages: string;
  output_text: string;
  body: string;
}

function toStored(r: Row): StoredResponse {
  return {
    id: r.id,
    keyId: r.key_id,
    createdAt: r.created_at,
    previousResponseId: r.previous_response_id,
    items: JSON.parse(r.items) as unknown[],
    messages: JSON.parse(r.messages) as unknown[],
    outputText: r.output_text,
    body: JSON.parse(r.body) as Record<string, unknown>,
  };
}

/** The longest chain of `previous_response_id` olp follows to rebuild a conversation. */
export const MAX_CHAIN = 2_000;

/** A stored output item found by its id: the item, and the length of its JSON text. */
export interface ReferencedItem {
  item: Record<string, unknown>;
  bytes: number;
}

/** A tool call among a Response's output items (function, custom, shell, apply_patch), as stored. */
export type StoredCallItem = Record<string, unknown> & { type: string; call_id: string };

/**
 * The call items among a Response's output items, in order (a chain replays them; see validate's
 * `callOfItem`).
 */
function toCallItems(output: readonly Record<string, unknown>[]): StoredCallItem[] {
  return output.filter(
    (o): o is StoredCallItem => typeof o.type === 'string' && typeof o.call_id === 'string' && o.call_id !== '',
  );
}

/** The response store's statements, and the transaction that saves a response with its output items. */
function prepareResponseStatements(db: Database) {
  const insert = db.prepare(
    `INSERT INTO responses (id, key_id, created_at, previous_response_id, items, messages, output_text, body)
     VALUES (@id, @keyId, @createdAt, @previousResponseId, @items, @messages, @outputText, @body)`,
  );
  const insertItem = db.prepare<[string, string, string, number, string | null, string]>(
    `INSERT OR IGNORE INTO response_items (key_id, item_id, response_id, seq, type, item)
     VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const save = db.transaction((r: StoredResponse) => {
    const output = Array.isArray(r.body.output) ? (r.body.output as { id?: unknown; type?: unknown }[]) : [];
    insert.run({
      ...r,
      items: JSON.stringify(r.items),
      messages: JSON.stringify(r.messages),
      body: JSON.stringify(r.body),
    });
    output.forEach((o, seq) => {
      if (typeof o.id === 'string' && o.id)
        insertItem.run(r.keyId, o.id, r.id, seq, typeof o.type === 'string' ? o.type : null, JSON.stringify(o));
    });
  });
  return {
    save,
    byId: db.prepare<[string, string], Row>('SELECT * FROM responses WHERE id = ? AND key_id = ?'),
    // One indexed walk down the chain (ids are primary keys), newest first, at most MAX_CHAIN links,
    // with each link's function-call items from the item index: the body column (the row's largest,
    // on overflow pages) is never read.
    links: db.prepare<[string, string, string, number], Pick<Row, 'messages' | 'output_text'> & { calls: string }>(
      `WITH RECURSIVE c(id, previous, depth) AS (
         SELECT id, previous_response_id, 1 FROM responses WHERE id = ? AND key_id = ?
         UNION ALL
         SELECT r.id, r.previous_response_id, c.depth + 1
           FROM c JOIN responses r ON r.id = c.previous AND r.key_id = ? WHERE c.depth < ?
       )
       SELECT r.messages, r.output_text,
         (SELECT json_group_array(json(i.item)) FROM (
            SELECT item FROM response_items
            WHERE response_id = c.id
              AND type IN ('function_call', 'custom_tool_call', 'shell_call', 'apply_patch_call')
            ORDER BY seq) i) AS calls
       FROM c JOIN responses r ON r.id = c.id ORDER BY c.depth DESC`,
    ),
    // Item ids come in as one JSON array: one statement, one primary-key look-up per distinct id.
    itemsById: db.prepare<[string, string], { item_id: string; item: string }>(
      'SELECT item_id, item FROM response_items WHERE key_id = ? AND item_id IN (SELECT value FROM json_each(?))',
    ),
    remove: db.prepare<[string, string]>('DELETE FROM responses WHERE id = ? AND key_id = ?'),
    prune: db.prepare<[number]>('DELETE FROM responses WHERE created_at < ?'),
    list: db.prepare<[number], Row & { key_name: string | null }>(
      `SELECT r.*, k.name AS key_name FROM responses r LEFT JOIN keys k ON k.id = r.key_id
       ORDER BY r.created_at DESC LIMIT ?`,
    ),
  };
}

/** A stored response as the owner's listing shows it. */
export type ListedResponse = Omit<StoredResponse, 'items' | 'messages' | 'body'> & {
  keyName: string | null;
  model: string;
  status: string;
};

function toListed(r: Row & { key_name: string | null }): ListedResponse {
  const body = JSON.parse(r.body) as { model?: string; status?: string };
  return {
    id: r.id,
    keyId: r.key_id,
    keyName: r.key_name,
    createdAt: r.created_at,
    previousResponseId: r.previous_response_id,
    outputText: r.output_text,
    model: body.model ?? '',
    status: body.status ?? '',
  };
}

/** Stored responses, each readable only by the key that made it. */
export function createResponseStore(db: Database) {
  const { save, byId, links, itemsById, remove, prune, list } = prepareResponseStatements(db);
  return {
    save(r: StoredResponse): void {
      save(r);
    },
    /** The response if it exists and belongs to this key. */
    get(keyId: string, id: string): StoredResponse | undefined {
      const row = byId.get(id, keyId);
      return row && toStored(row);
    },
    /**
     * The response and its stored ancestors, oldest first (a deleted ancestor ends the chain); no Response
     * body is read.
     */
    chain(
      keyId: string,
      id: string,
    ): (Pick<StoredResponse, 'messages' | 'outputText'> & { toolCalls: StoredCallItem[] })[] {
      return links.all(id, keyId, keyId, MAX_CHAIN).map((row) => ({
        messages: JSON.parse(row.messages) as unknown[],
        outputText: row.output_text,
        toolCalls: toCallItems(JSON.parse(row.calls) as Record<string, unknown>[]),
      }));
    },
    /**
     * Output items (messages, function calls) of this key's stored responses, by id, found in the
     * item index: the ids not found are missing from the map. Each distinct item is parsed once.
     */
    items(keyId: string, itemIds: readonly string[]): Map<string, ReferencedItem> {
      const found = new Map<string, ReferencedItem>();
      if (itemIds.length === 0) return found;
      for (const row of itemsById.all(keyId, JSON.stringify([...new Set(itemIds)]))) {
        found.set(row.item_id, { item: JSON.parse(row.item) as Record<string, unknown>, bytes: row.item.length });
      }
      return found;
    },
    delete(keyId: string, id: string): boolean {
      return remove.run(id, keyId).changes > 0;
    },
    /** The newest responses of every key, for the owner's listing. */
    list(limit = 50): ListedResponse[] {
      return list.all(limit).map(toListed);
    },
    /** Deletes responses older than the cutoff; returns how many went. */
    prune(olderThanMs: number): number {
      return prune.run(olderThanMs).changes;
    },
  };
}

export type ResponseStore = ReturnType<typeof createResponseStore>;
