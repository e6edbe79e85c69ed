import type { Logger } from '../log/index.js';

/**
 * A CLI turn waiting for the client's tool results: the model called the client's functions,
 * the calls went out to the client, and the CLI is blocked on its MCP calls. The same key's next
 * request that answers exactly these calls continues it (`resume`); nothing else may.
 */
export interface ParkedTurn {
  readonly keyId: string;
  /** The model id the client asked for (a continuation must ask for the same). */
  readonly model: string;
  /** The tool call ids the client was sent, in order. */
  readonly callIds: readonly string[];
  /** Stops the CLI and cleans up; safe to call twice. */
  retire(reason: string): Promise<void>;
}

/** The parked turns of the daemon, by key and call ids, each expiring after `ttlMs`. */
export function createParkedTurns<T extends ParkedTurn>(o: { ttlMs: number; logger: Logger }) {
  return new ParkedTurnRegistry<T>(o.ttlMs, o.logger);
}

const keyOf = (keyId: string, ids: readonly string[]) => `${keyId}\u0000${[...ids].sort().join('\u0000')}`;

class ParkedTurnRegistry<T extends ParkedTurn> {
  private readonly parked = new Map<string, { turn: T; timer: NodeJS.Timeout }>();

  constructor(
    readonly ttlMs: number,
    private readonly logger: Logger,
  ) {}

  get size(): number {
    return this.parked.size;
  }

  park(turn: T): void {
    const key = keyOf(turn.keyId, turn.callIds);
    this.drop(key)?.retire('replaced');
    const timer = setTimeout(() => {
      if (this.parked.get(key)?.turn !== turn) return;
      this.parked.delete(key);
      this.logger.info({ event: 'parked_turn_expired', calls: turn.callIds.length }, 'a parked tool-call turn expired');
      void turn.retire('expired');
    }, this.ttlMs);
    timer.unref();
    this.parked.set(key, { turn, timer });
  }

  /** The key's turn parked on exactly these calls, taken out of the registry. */
  take(keyId: string, callIds: readonly string[]): T | undefined {
    if (callIds.length === 0) return undefined;
    return this.drop(keyOf(keyId, callIds));
  }

  /** How many turns the key has parked (they count against its concurrency). */
  countFor(keyId: string): number {
    let n = 0;
    for (const p of this.parked.values()) if (p.turn.keyId === keyId) n++;
    return n;
  }

  /**
   * Retires the oldest parked turn (of this key, or of any): its client sent a newer request
   * that needs the room (`key_concurrency`), or another turn needs room under the process cap
   * (`process_cap`). False when there is none.
   */
  shedOldest(
    keyId?: string,
    reason: 'key_concurrency' | 'process_cap' = keyId === undefined ? 'process_cap' : 'key_concurrency',
  ): boolean {
    for (const [k, p] of this.parked) {
      if (keyId !== undefined && p.turn.keyId !== keyId) continue;
      this.drop(k);
      this.logger.info(
        { event: 'parked_turn_retired', calls: p.turn.callIds.length, reason },
        'retired a parked tool-call turn to make room for a newer request',
      );
      void p.turn.retire('evicted');
      return true;
    }
    return false;
  }

  /**
   * Retires the key's parked turns that will never be continued: a request carries the client's
   * result for one of their calls and is not their continuation (that one was taken:
   * `superseded`), or the client never got one of their calls (`unanswerable`).
   */
  retireAnswered(
    keyId: string,
    answered: ReadonlySet<string>,
    reason: 'superseded' | 'unanswerable' = 'superseded',
  ): void {
    if (answered.size === 0) return;
    for (const [k, p] of [...this.parked]) {
      if (p.turn.keyId !== keyId || !p.turn.callIds.some((id) => answered.has(id))) continue;
      this.drop(k);
      this.logger.info(
        { event: 'parked_turn_retired', calls: p.turn.callIds.length, reason },
        reason === 'superseded'
          ? 'retired a parked tool-call turn its conversation has moved past'
          : 'retired a parked tool-call turn whose calls the client never got',
      );
      void p.turn.retire(reason === 'superseded' ? 'superseded' : 'done');
    }
  }

  /** Every parked turn of a key, retired (its revocation, disabling or expiry). */
  retireKey(keyId: string, reason: string): void {
    for (const [k, p] of [...this.parked]) if (p.turn.keyId === keyId) void this.drop(k)?.retire(reason);
  }

  /** The keys that have a parked turn here. */
  keyIds(): Set<string> {
    return new Set([...this.parked.values()].map((p) => p.turn.keyId));
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.parked.keys()].map((k) => this.drop(k)?.retire('shutdown')));
  }

  private drop(key: string): T | undefined {
    const p = this.parked.get(key);
    if (!p) return undefined;
    clearTimeout(p.timer);
    this.parked.delete(key);
    return p.turn;
  }
}

export type ParkedTurns = ReturnType<typeof createParkedTurns<ParkedTurn>>;
