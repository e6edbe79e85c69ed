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

/** A function call a stored response made. */
export interface StoredToolCall {
  callId: string;
  name: string;
  arguments: string;
}

/** The longest chain of `previous_response_id` olp follows to rebuild a conversation. */
export const MAX_CHAIN = 2_000;

/** Stored responses, each readable only by the key that made it. */
export function createResponseStore(db: Database) {
  const insert = db.prepare(
    `INSERT INTO responses (id, key_id, created_at, previous_response_id, items, messages, output_text, body)
     VALUES (@id, @keyId, @createdAt, @previousResponseId, @items, @messages, @outputText, @body)`,
  );
  const byId = db.prepare<[string, string], Row>('SELECT * FROM responses WHERE id = ? AND key_id = ?');
  const link = db.prepare<[string, string], Pick<Row, 'previous_response_id' | 'messages' | 'output_text' | 'body'>>('SELECT previous_response_id, messages, output_text, body FROM responses WHERE id = ? AND key_id = ?');
  // Output item ids are long random strings: a text search of the key's own responses finds one.
  const withItem = db.prepare<[string, string], Pick<Row, 'body'>>('SELECT body FROM responses WHERE key_id = ? AND instr(body, ?) > 0 ORDER BY created_at DESC LIMIT 5');
  const remove = db.prepare<[string, string]>('DELETE FROM responses WHERE id = ? AND key_id = ?');
  const prune = db.prepare<[number]>('DELETE FROM responses WHERE created_at < ?');
  const list = db.prepare<[number], Row & { key_name: string | null }>(
    'SELECT r.*, k.name AS key_name FROM responses r LEFT JOIN keys k ON k.id = r.key_id ORDER BY r.created_at DESC LIMIT ?',
  );
  return {
    save(r: StoredResponse): void {
      insert.run({ ...r, items: JSON.stringify(r.items), messages: JSON.stringify(r.messages), body: JSON.stringify(r.body) });
    },
    /** The response if it exists and belongs to this key. */
    get(keyId: string, id: string): StoredResponse | undefined {
      const row = byId.get(id, keyId);
      return row && toStored(row);
    },
    /** The response and its stored ancestors, oldest first (a deleted ancestor ends the chain). */
    chain(keyId: string, id: string): (Pick<StoredResponse, 'messages' | 'outputText'> & { toolCalls: StoredToolCall[] })[] {
      const out: (Pick<StoredResponse, 'messages' | 'outputText'> & { toolCalls: StoredToolCall[] })[] = [];
      let next: string | null = id;
      while (next && out.length < MAX_CHAIN) {
        const row = link.get(next, keyId);
        if (!row) break;
        const output = ((JSON.parse(row.body) as { output?: { type?: string; call_id?: string; name?: string; arguments?: string }[] }).output ?? []);
        const toolCalls = output.filter((o) => o.type === 'function_call' && o.call_id && o.name).map((o) => ({ callId: o.call_id!, name: o.name!, arguments: o.arguments ?? '{}' }));
        out.push({ messages: JSON.parse(row.messages) as unknown[], outputText: row.output_text, toolCalls });
        next = row.previous_response_id;
      }
      return out.reverse();
    },
    /** An output item (message or function call) of one of this key's stored responses, by its id. */
    item(keyId: string, itemId: string): Record<string, unknown> | undefined {
      for (const row of withItem.all(keyId, `"${itemId}"`)) {
        const output = (JSON.parse(row.body) as { output?: Record<string, unknown>[] }).output ?? [];
        const found = output.find((o) => o.id === itemId);
        if (found) return found;
      }
      return undefined;
    },
    delete(keyId: string, id: string): boolean {
      return remove.run(id, keyId).changes > 0;
    },
    /** The newest responses of every key, for the owner's listing. */
    list(limit = 50): (Omit<StoredResponse, 'items' | 'messages' | 'body'> & { keyName: string | null; model: string; status: string })[] {
      return list.all(limit).map((r) => {
        const body = JSON.parse(r.body) as { model?: string; status?: string };
        return { id: r.id, keyId: r.key_id, keyName: r.key_name, createdAt: r.created_at, previousResponseId: r.previous_response_id, outputText: r.output_text, model: body.model ?? '', status: body.status ?? '' };
      });
    },
    /** Deletes responses older than the cutoff; returns how many went. */
    prune(olderThanMs: number): number {
      return prune.run(olderThanMs).changes;
    },
  };
}

export type ResponseStore = ReturnType<typeof createResponseStore>;
