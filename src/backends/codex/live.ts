import type { ExitInfo } from '../../process/index.js';
import { createLineReader } from '../common.js';
import { END_TURN, type StopReason } from '../../core/index.js';
import type { BackendEvent, EventParser, ToolStep, TurnOutcome } from '../types.js';
import { spentReport } from './errors.js';
import { Attempt } from './attempt.js';
import { Thoughts } from './thoughts.js';
import { INTERRUPT_ID, toTurnInterrupt } from './live-invocation.js';
import { toCodexOutcome } from './outcome.js';
import { type RateLimits, toCodexPlanReport } from './rate-limits.js';
import { toRawAppServerUsage } from './usage.js';

export { toCodexPlanReport } from './rate-limits.js';

// `codex app-server` (codex-cli 0.171): JSON-RPC messages, one per line, without a "jsonrpc"
// field: requests {id, method, params}, responses {id, result | error}, notifications {method,
// params}. olp keeps one per live session slot: it loads the thread a cold `codex exec` turn left
// (thread/resume) and takes the conversation's next turns (turn/start), each answered by the
// turn's notifications up to turn/completed.

interface Message {
  id?: unknown;
  method?: string;
  result?: { turn?: { id?: string } };
  error?: { message?: string };
  params?: Params;
}

interface Params {
  threadId?: string;
  turnId?: string;
  itemId?: string;
  delta?: string;
  /** Which part of a reasoning item's summary a delta belongs to. */
  summaryIndex?: number;
  willRetry?: boolean;
  error?: { message?: string };
  item?: {
    type?: string;
    id?: string;
    text?: string;
    summary?: unknown;
    server?: string;
    tool?: string;
    arguments?: unknown;
  };
  turn?: { id?: string; status?: string; error?: { message?: string } | null };
  tokenUsage?: { total?: Record<string, unknown> };
  rateLimits?: RateLimits;
}

/**
 * Reads one turn of an app-server worker: the agent message's deltas as they come (a message
 * that arrives without deltas is forwarded whole), the thread's running token total as of this
 * turn (an update replayed for an earlier turn is ignored), the model's reasoning summary as
 * thinking (`item/reasoning/summaryTextDelta`, or a reasoning item's whole `summary`), retries
 * (`error` with willRetry) as retries, and the end at this turn's `turn/completed`. A retry after
 * the provider's stream broke asks the model again: the messages streamed so far (whole or in
 * part) are not the turn's (its
 * `turn/completed` lists only the retried one; 0.171, captured), and are said `abandoned`.
 *
 * A thread given olp's MCP server (see toAppServerInvocation) may call the client's functions:
 * each `mcpToolCall` item of server `olp` is a call as the exec parser reads it (an open
 * `toolStep`; the turn waits on the call until the bridge answers it, then goes on to its
 * `turn/completed`). A retry takes back only what came after the last call started: codex keeps
 * a started call (see createToolCalls). Shapes: test/fixtures/reference/codex-0.171.0-app-server-*tool-call*.jsonl.
 *
 * olp may interrupt the turn (at the client's stop sequence: `interrupt`, see toTurnInterrupt):
 * its `turn/completed` then says `interrupted`, and the turn ends ok, as `interrupted`.
 */
export function createAppServerParser(model?: string): EventParser {
  return new AppServerTurn(model);
}

/** One app-server turn as it is read: each kind of message is a step (see createAppServerParser). */
class AppServerTurn implements EventParser {
  private readonly reader = createLineReader<Message>();
  /** What was forwarded since the model was last asked, and the calls of the client's functions. */
  private readonly attempt = new Attempt();
  /** Agent messages (by item id) that came in deltas: their completed item is not forwarded again. */
  private readonly streamed = new Set<string>();
  /** The model's reasoning summary, as thinking. */
  private readonly thoughts = new Thoughts();
  private turnId: string | undefined;
  private threadId: string | undefined;
  private total: Record<string, number> | null = null;
  /** The turn's status at its `turn/completed` (or `failed` when turn/start was refused). */
  private status: string | undefined;
  private failed: string | undefined;
  private lastError: string | undefined;
  /** olp asked codex to interrupt this turn. */
  private interrupted = false;

  constructor(private readonly model: string | undefined) {}

  get complete(): boolean {
    return this.status !== undefined;
  }

  get toolStep(): ToolStep | undefined {
    return this.attempt.toolStep;
  }

  continueAfterTools(): void {
    this.attempt.continueAfterTools();
  }

  /** The turn/interrupt request for this turn; '' while its ids are not known yet (nothing to ask then). */
  interrupt(): string {
    if (!this.threadId || !this.turnId) return '';
    this.interrupted = true;
    return toTurnInterrupt(this.threadId, this.turnId);
  }

  push(raw: string): BackendEvent[] {
    const msg = this.reader.read(raw);
    if (!msg) return [];
    if (msg.method === undefined && msg.id !== undefined) return this.answer(msg);
    const p = msg.params ?? {};
    switch (msg.method) {
      case 'turn/started':
        return this.turnStarted(p);
      case 'item/agentMessage/delta':
        return this.ours(p.turnId) && typeof p.delta === 'string' ? this.text(p.itemId ?? 'message', p.delta) : [];
      case 'item/reasoning/summaryTextDelta':
        return this.ours(p.turnId) && typeof p.delta === 'string'
          ? this.thoughts.delta(p.itemId ?? 'reasoning', p.summaryIndex ?? 0, p.delta)
          : [];
      case 'item/started':
        return this.ours(p.turnId) ? this.itemStarted(p.item) : [];
      case 'item/completed':
        return this.ours(p.turnId) ? this.itemCompleted(p.item) : [];
      case 'thread/tokenUsage/updated':
        return this.tokenUsage(p);
      case 'account/rateLimits/updated': {
        const report = toCodexPlanReport(p.rateLimits);
        return report ? [{ type: 'plan', report }] : [];
      }
      case 'error':
        return this.ours(p.turnId) ? this.error(p.error?.message ?? 'error', p.willRetry === true) : [];
      case 'turn/completed':
        return this.turnCompleted(p.turn);
      default:
        return []; // status changes, warnings and future notifications
    }
  }

  finish(exit: ExitInfo): TurnOutcome {
    const { total, threadId, failed, lastError, model } = this;
    const stopReason = this.stopReason();
    return toCodexOutcome(
      stopReason,
      { total, threadId, failed, lastError, summary: this.reader.summary(), model },
      exit,
    );
  }

  /** How the turn ended well: completed, or interrupted when olp asked; undefined when it did not. */
  private stopReason(): StopReason | undefined {
    if (this.status === 'completed') return END_TURN;
    return this.status === 'interrupted' && this.interrupted ? { type: 'interrupted' } : undefined;
  }

  /** An event of this turn (or of no turn in particular). */
  private ours(id: string | undefined): boolean {
    return this.turnId === undefined || id === undefined || id === this.turnId;
  }

  /**
   * The answer to our turn/start: the turn's id, or why there is no turn. The answer to an
   * interrupt is no turn's: `{}`, or an error when it came too late (read by the next turn).
   */
  private answer(msg: Message): BackendEvent[] {
    if (msg.id === INTERRUPT_ID) return [];
    if (msg.result?.turn?.id) this.turnId = msg.result.turn.id;
    else if (msg.error) {
      this.failed = msg.error.message ?? 'turn/start failed';
      this.status = 'failed';
    }
    return [];
  }

  private turnStarted(p: Params): BackendEvent[] {
    this.turnId ??= p.turn?.id;
    if (!p.threadId || this.threadId) return [];
    this.threadId = p.threadId;
    return [{ type: 'session', sessionId: p.threadId }];
  }

  /** Agent message text: a delta, or a whole message that came without deltas. */
  private text(itemId: string, t: string): BackendEvent[] {
    if (!this.streamed.has(itemId)) {
      this.streamed.add(itemId);
      if (this.attempt.messages++ > 0) t = `\n\n${t}`;
    }
    return t ? this.attempt.said([{ type: 'text', text: t }]) : [];
  }

  /** A call of olp's MCP server (the client's functions) starts. */
  private itemStarted(item: Params['item']): BackendEvent[] {
    if (item?.type !== 'mcpToolCall' || item.server !== 'olp' || typeof item.tool !== 'string' || !item.id) return [];
    return this.attempt.call(item.id, item.tool, item.arguments);
  }

  private itemCompleted(item: Params['item']): BackendEvent[] {
    if (item?.type === 'reasoning') return this.thoughts.completed(item.id ?? 'reasoning', item.summary);
    if (item?.type !== 'agentMessage' || typeof item.text !== 'string') return [];
    // Streamed already: the deltas were the text.
    if (this.streamed.has(item.id ?? 'message')) return [];
    return this.text(item.id ?? 'message', item.text);
  }

  /**
   * The thread's running total as of this turn. Two updates restate an old total and are not
   * taken (0.171, captured): the one replayed after thread/resume (tagged with an earlier turn,
   * it comes before this turn is known), and the one codex sends when olp interrupts the turn
   * (the total as of the last reply it finished, which the interrupted one is not in). A turn
   * interrupted with no total of its own then has no usage: the ledger estimates what was sent.
   */
  private tokenUsage(p: Params): BackendEvent[] {
    if (this.interrupted || this.turnId === undefined || (p.turnId !== undefined && p.turnId !== this.turnId))
      return [];
    if (p.tokenUsage?.total) this.total = toRawAppServerUsage(p.tokenUsage.total);
    return [];
  }

  private error(message: string, willRetry: boolean): BackendEvent[] {
    if (willRetry) return this.attempt.retry(message);
    this.lastError = message;
    return spentReport(message);
  }

  private turnCompleted(turn: Params['turn']): BackendEvent[] {
    if (!this.ours(turn?.id)) return [];
    this.status = turn?.status ?? 'completed';
    if (this.status !== 'completed') this.failed = turn?.error?.message ?? this.lastError ?? `turn ${this.status}`;
    return [];
  }
}
