import type { ExitInfo } from '../../process/index.js';
import { createLineReader } from '../common.js';
import type { BackendEvent, EventParser, ToolStep, TurnOutcome } from '../types.js';
import type { ClaudeResult } from './errors.js';
import { toClaudeOutcome, toInterrupt } from './outcome.js';
import type { PlanReport } from '../../plan/index.js';
import { KNOWN_IGNORED, KNOWN_SYSTEM, type Line, rawCounts, STRUCTURED_TOOL, toPlanReport } from './shapes.js';
import { jsonDeltaOf, textDeltaOf, thinkingDeltaOf, toolStartOf, toRetryMessage, toToolStep } from './shapes.js';

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
  const reader = createLineReader<Line>();
  let sessionId: string | undefined;
  let result: (ClaudeResult & { usage?: unknown; total_cost_usd?: unknown }) | undefined;
  let assistantError: string | undefined;
  let currentMessage: string | undefined;
  let stopReason: string | null | undefined;
  let interrupted = false; // olp asked the CLI to interrupt this turn
  const streamed = new Set<string>();
  // Tool calls of the message being read: block index -> the call's place in the step.
  let calls: { id: string; name: string; arguments: string }[] = [];
  const blockCall = new Map<number, number>();
  let messageUsage: Record<string, number> | undefined;
  let toolStep: ToolStep | undefined;
  /** Raw counts already reported with tool steps, left out of the turn's final usage. */
  const reported: Record<string, number> = {};
  // Structured output (a schema given with `initialize`): the CLI offers the model its
  // StructuredOutput tool and checks the call; the reply is the checked object from the `result`
  // line alone, and text written around it is held back (the reply only if no call came).
  let plan: PlanReport | undefined;
  const unknown = new Set<string>();
  let structured = false;
  const structuredBlocks = new Set<number>();
  let held = '';
  /** Characters of reply text emitted this turn (after any abandoned message's were taken back). */
  let emittedText = 0;
  /** The top-level message streamed until its `message_delta`: what it emitted (and held), for an abandonment. */
  let attempt: { id: string | undefined; text: string; events: number; held: number; calls: number } | undefined;

  /** Reply events of the streaming message count towards what its abandonment takes back. */
  function counted(events: BackendEvent[]): BackendEvent[] {
    if (attempt) {
      for (const ev of events) {
        if (ev.type === 'text') attempt.text += ev.text;
        if (ev.type === 'text' || ev.type === 'tool_call' || ev.type === 'tool_args') attempt.events++;
      }
    }
    return events;
  }

  /** The streaming message was abandoned by the CLI (see above): its events are void. */
  function abandon(): BackendEvent[] {
    const gone = attempt;
    attempt = undefined;
    if (!gone) return [];
    held = held.slice(0, gone.held);
    calls = calls.slice(0, gone.calls);
    blockCall.clear();
    structuredBlocks.clear();
    emittedText -= gone.text.length;
    return gone.events > 0 ? [{ type: 'abandoned', text: gone.text, events: gone.events }] : [];
  }

  function text(t: string): BackendEvent[] {
    if (structured) {
      held += t;
      return [];
    }
    emittedText += t.length;
    return [{ type: 'text', text: t }];
  }

  /** A tool call block (streamed or whole): the client sees its own function name. */
  function startCall(block: number | undefined, id: string, name: string): BackendEvent {
    const index = calls.length;
    calls.push({ id, name: name.replace(/^mcp__olp__/, ''), arguments: '' });
    if (block !== undefined) blockCall.set(block, index);
    return { type: 'tool_call', index, id, name: calls[index]!.name };
  }

  return {
    get complete() {
      return result !== undefined;
    },
    get toolStep() {
      return toolStep;
    },
    continueAfterTools() {
      toolStep = undefined;
      calls = [];
      blockCall.clear();
    },
    unknown,
    push(raw: string): BackendEvent[] {
      const line = reader.read(raw);
      if (!line) return [];
      const topLevel = line.parent_tool_use_id == null;
      switch (line.type) {
        case 'system':
          if (typeof line.subtype === 'string' && !KNOWN_SYSTEM.test(line.subtype))
            unknown.add(`system/${line.subtype}`);
          // claude 2.1.197: one `api_retry` per failed API attempt (up to 10 by default, ~3 min in all).
          if (line.subtype === 'api_retry') return [{ type: 'retry', message: toRetryMessage(line) }];
          if (line.subtype === 'init' && Array.isArray(line.tools)) structured = line.tools.includes(STRUCTURED_TOOL);
          if (line.subtype === 'init' && typeof line.session_id === 'string' && sessionId === undefined) {
            sessionId = line.session_id;
            return [{ type: 'session', sessionId, ...(line.model ? { model: line.model } : {}) }];
          }
          return [];
        case 'stream_event': {
          const ev = line.event;
          if (!topLevel || !ev) return [];
          if (ev.type === 'message_start') {
            // The message before never finished: the CLI asks again.
            const gone = abandon();
            currentMessage = ev.message?.id;
            messageUsage = rawCounts(ev.message?.usage);
            stopReason = undefined;
            attempt = { id: currentMessage, text: '', events: 0, held: held.length, calls: calls.length };
            return gone;
          }
          if (ev.type === 'message_delta' && ev.delta && 'stop_reason' in ev.delta) {
            stopReason = ev.delta.stop_reason;
            attempt = undefined;
          }
          if (ev.type === 'message_delta' && messageUsage && typeof ev.usage?.output_tokens === 'number')
            messageUsage.output_tokens = ev.usage.output_tokens;
          const delta = textDeltaOf(ev);
          if (delta !== undefined) {
            if (currentMessage) streamed.add(currentMessage);
            return counted(text(delta));
          }
          const thought = thinkingDeltaOf(ev);
          if (thought) {
            if (currentMessage) streamed.add(currentMessage);
            return [thought];
          }
          const block = toolStartOf(ev);
          if (block?.name === STRUCTURED_TOOL) {
            if (currentMessage) streamed.add(currentMessage);
            structuredBlocks.add(ev.index ?? -1);
            return [];
          }
          if (ev.type === 'content_block_delta' && structuredBlocks.has(ev.index ?? -1)) return [];
          if (block?.id && block.name) {
            if (currentMessage) streamed.add(currentMessage);
            return counted([startCall(ev.index, block.id, block.name)]);
          }
          const json = jsonDeltaOf(ev);
          if (json !== undefined) {
            const index = blockCall.get(ev.index ?? -1);
            if (index === undefined) return [];
            calls[index]!.arguments += json;
            return counted([{ type: 'tool_args', index, text: json }]);
          }
          if (ev.type === 'message_stop') structuredBlocks.clear();
          if (ev.type === 'message_stop' && stopReason === 'tool_use' && calls.length > 0) {
            const ended = toToolStep(calls, messageUsage, reported);
            toolStep = ended.step;
            return ended.events;
          }
          return [];
        }
        case 'assistant': {
          if (!topLevel) return [];
          if (typeof line.error === 'string') assistantError = line.error;
          const msg = line.message;
          // Synthetic messages carry error text ("Not logged in"), never a reply; for a spent plan
          // window, the CLI's own words for it.
          if (msg?.model === '<synthetic>' && plan?.status === 'rejected') {
            const said = (msg.content ?? [])
              .map((c) => c.text ?? '')
              .join('')
              .trim();
            if (said) {
              plan = { ...plan, message: said };
              return [{ type: 'plan', report: plan }];
            }
          }
          if (!msg || msg.model === '<synthetic>' || line.error || (msg.id && streamed.has(msg.id))) return [];
          // Another message than the one streaming: the CLI gave that one up and asked again.
          const out: BackendEvent[] = attempt && msg.id !== attempt.id ? abandon() : [];
          for (const c of msg.content ?? []) {
            if (c.type === 'thinking' && typeof c.thinking === 'string' && c.thinking !== '')
              out.push({
                type: 'thinking',
                text: c.thinking,
                ...(typeof c.signature === 'string' && c.signature !== '' ? { signature: c.signature } : {}),
              });
            if (c.type === 'text' && typeof c.text === 'string' && c.text !== '') out.push(...text(c.text));
            // Without partial messages a tool call arrives whole.
            if (c.type === 'tool_use' && c.id && c.name && c.name !== STRUCTURED_TOOL) {
              const start = startCall(undefined, c.id, c.name);
              const args = JSON.stringify(c.input ?? {});
              calls[(start as { index: number }).index]!.arguments = args;
              out.push(start, { type: 'tool_args', index: (start as { index: number }).index, text: args });
            }
          }
          return out;
        }
        case 'rate_limit_event': {
          // Subscription logins: one per turn (2.1.197); 2.1.332 adds unifiedWindows with utilization.
          const report = toPlanReport((line as { rate_limit_info?: unknown }).rate_limit_info);
          if (!report) return [];
          plan = report;
          return [{ type: 'plan', report }];
        }
        case 'result': {
          result = line as typeof result;
          if (!result || result.is_error) return [];
          const checked = (result as { structured_output?: unknown }).structured_output;
          if (structured) {
            structured = false;
            if (checked !== undefined) return text(JSON.stringify(checked));
            if (held !== '') return text(held);
          }
          if (emittedText === 0 && typeof result.result === 'string' && result.result !== '')
            return text(result.result);
          return [];
        }
        default:
          // Unknown and future event types are ignored, per the reference, and noted.
          if (typeof line.type === 'string' && !KNOWN_IGNORED.has(line.type)) unknown.add(line.type);
          return [];
      }
    },

    interrupt: () => ((interrupted = true), toInterrupt()),
    finish(exit: ExitInfo): TurnOutcome {
      const seen = { sessionId, stopReason, plan, assistantError, reported, interrupted, ...reader.summary() };
      return toClaudeOutcome({ ...seen, ...(result ? { result } : {}), ...(model ? { model } : {}) }, exit);
    },
  };
}
