import type { PlanReport } from '../../plan/index.js';
import type { ExitInfo } from '../../process/index.js';
import { createLineReader } from '../common.js';
import type { BackendEvent, EventParser, ToolStep, TurnOutcome } from '../types.js';
import { type ClaudeSeen, toClaudeOutcome, toInterrupt } from './outcome.js';
import { ClaudeReply } from './reply.js';
import { type Content, KNOWN_IGNORED, KNOWN_SYSTEM, type Line, STRUCTURED_TOOL } from './shapes.js';
import { thinkingOf, toPlanReport, toRetryMessage } from './shapes.js';
import { ClaudeStream } from './stream.js';

/**
 * Reads `claude -p --output-format stream-json --verbose --include-partial-messages` output.
 * Text comes from `text_delta` stream events as they arrive; if a message arrives without deltas
 * (older CLIs, no partial messages) its `assistant` event's text is used; usage and success come
 * from the `result` line only (the `assistant` usage is a message_start snapshot).
 *
 * A streamed message is finished by its `message_delta` (the stop reason). When the provider's
 * stream breaks before that, the CLI asks the model again, and the message is abandoned: 2.1.197
 * goes on with an `assistant` line of another message id (a non-streamed retry), 2.1.332 closes the
 * broken message with a `message_stop` of its own (no `message_delta`) and goes on with an
 * `api_retry` line and a new `message_start`, or with an `assistant` line of another id. At the
 * next message (not at the `api_retry`, which could be another request's) the parser says
 * `abandoned`, and forgets the message's text and tool calls.
 *
 * Thinking deltas (and the block's signature, which Anthropic checks if a client sends the block
 * on) go out as `thinking` events: not the reply's text, nor among what an abandonment takes back.
 */
export function createClaudeParser(model?: string): EventParser {
  return new ClaudeParser(model);
}

/** What a claude parser has read of a turn, one method per kind of stream-json line. */
class ClaudeParser implements EventParser {
  private readonly reader = createLineReader<Line>();
  private readonly reply = new ClaudeReply();
  private readonly stream = new ClaudeStream(this.reply);
  private sessionId: string | undefined;
  private result: ClaudeSeen['result'];
  private assistantError: string | undefined;
  private plan: PlanReport | undefined;
  /** olp asked the CLI to interrupt this turn. */
  private interrupted = false;
  readonly unknown = new Set<string>();

  constructor(private readonly model: string | undefined) {}

  get complete(): boolean {
    return this.result !== undefined;
  }

  get toolStep(): ToolStep | undefined {
    return this.stream.toolStep;
  }

  continueAfterTools(): void {
    this.stream.toolStep = undefined;
    this.reply.continueAfterTools();
  }

  push(raw: string): BackendEvent[] {
    const line = this.reader.read(raw);
    if (!line) return [];
    const topLevel = line.parent_tool_use_id == null;
    switch (line.type) {
      case 'system':
        return this.system(line);
      case 'stream_event':
        return topLevel && line.event ? this.stream.take(line.event) : [];
      case 'assistant':
        return topLevel ? this.assistant(line) : [];
      case 'rate_limit_event':
        return this.rateLimit(line);
      case 'result':
        return this.ended(line);
      default:
        // Unknown and future event types are ignored, per the reference, and noted.
        if (typeof line.type === 'string' && !KNOWN_IGNORED.has(line.type)) this.unknown.add(line.type);
        return [];
    }
  }

  interrupt(): string {
    this.interrupted = true;
    return toInterrupt();
  }

  finish(exit: ExitInfo): TurnOutcome {
    const { sessionId, plan, assistantError, interrupted, result, model } = this;
    const { stopReason, reported } = this.stream;
    const seen = { sessionId, stopReason, plan, assistantError, reported, interrupted, ...this.reader.summary() };
    return toClaudeOutcome({ ...seen, ...(result ? { result } : {}), ...(model ? { model } : {}) }, exit);
  }

  /** The session's id and tools (`init`), the CLI's retries of its provider, and other news. */
  private system(line: Line): BackendEvent[] {
    if (typeof line.subtype === 'string' && !KNOWN_SYSTEM.test(line.subtype))
      this.unknown.add(`system/${line.subtype}`);
    // claude 2.1.197: one `api_retry` per failed API attempt (up to 10 by default, ~3 min in all).
    if (line.subtype === 'api_retry') return [{ type: 'retry', message: toRetryMessage(line) }];
    if (line.subtype !== 'init') return [];
    if (Array.isArray(line.tools)) this.reply.structured = line.tools.includes(STRUCTURED_TOOL);
    if (typeof line.session_id !== 'string' || this.sessionId !== undefined) return [];
    this.sessionId = line.session_id;
    return [{ type: 'session', sessionId: this.sessionId, ...(line.model ? { model: line.model } : {}) }];
  }

  /** A top-level message whole: what it says, unless it streamed already. */
  private assistant(line: Line): BackendEvent[] {
    if (typeof line.error === 'string') this.assistantError = line.error;
    const msg = line.message;
    // Synthetic messages carry error text ("Not logged in"), never a reply.
    if (msg?.model === '<synthetic>') return this.synthetic(msg.content ?? []);
    if (!msg || line.error || (msg.id && this.stream.has(msg.id))) return [];
    const out = this.reply.whole(msg.id);
    for (const c of msg.content ?? []) out.push(...this.content(c));
    return out;
  }

  private content(c: Content): BackendEvent[] {
    const thought = thinkingOf(c);
    if (thought) return [thought];
    if (c.type === 'text' && typeof c.text === 'string' && c.text !== '') return this.reply.text(c.text);
    if (c.type === 'tool_use' && c.id && c.name && c.name !== STRUCTURED_TOOL)
      return this.reply.wholeCall(c.id, c.name, c.input);
    return [];
  }

  /** A synthetic message's text is the CLI's own words for a spent plan window. */
  private synthetic(content: Content[]): BackendEvent[] {
    if (this.plan?.status !== 'rejected') return [];
    const said = content
      .map((c) => c.text ?? '')
      .join('')
      .trim();
    if (!said) return [];
    this.plan = { ...this.plan, message: said };
    return [{ type: 'plan', report: this.plan }];
  }

  /** Subscription logins: one per turn (2.1.197); 2.1.332 adds unifiedWindows with utilization. */
  private rateLimit(line: Line): BackendEvent[] {
    const report = toPlanReport((line as { rate_limit_info?: unknown }).rate_limit_info);
    if (!report) return [];
    this.plan = report;
    return [{ type: 'plan', report }];
  }

  /** The `result` line: the turn's end, its usage and success, and the reply where nothing said it. */
  private ended(line: Line): BackendEvent[] {
    const result = line as NonNullable<ClaudeSeen['result']>;
    this.result = result;
    if (result.is_error) return [];
    return this.reply.final((line as { structured_output?: unknown }).structured_output, result.result);
  }
}
