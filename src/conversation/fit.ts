import type { Backend, Usage } from '../backends/index.js';
import type { Message } from '../core/index.js';
import type { Lease } from '../sessions/index.js';
import { choiceInstruction, type ToolRequest } from '../tools/index.js';
import {
  imageCount,
  toTranscript,
  transcriptChars,
  tryFitContext,
  withResponseFormat,
  type Fitted,
  type ResponseFormat,
  type Transcript,
} from '../transcript/index.js';
import type { ConversationDeps } from './types.js';

/**
 * The conversation as one backend needs it (`full`: what the session pool matches against its
 * slots), and as it is sent when it is sent whole (`whole`: within the model's prompt budget at
 * the key's calibrated token rate, or the reason it cannot be). A conversation the CLI's session
 * continues is not held to the budget: the CLI carries (and compacts) it.
 */
export function transcriptFor(
  deps: ConversationDeps,
  keyId: string,
  messages: readonly Message[],
  format: ResponseFormat | undefined,
  model: string,
  backend: Backend,
  tools?: ToolRequest,
): ModelTranscript {
  const parsed = toTranscript(messages, backend.transcriptPolicy(deps.imageLimits));
  const formatted = withResponseFormat({ system: parsed.system, text: '' }, format).system;
  // A tool choice the CLI cannot enforce by itself is asked for in the system prompt.
  const instruction = tools ? choiceInstruction(tools) : undefined;
  const system = instruction ? [formatted, instruction].filter(Boolean).join('\n\n') : formatted;
  const limit = deps.contextTokens[model] ?? deps.contextTokens[backend.id] ?? 200_000;
  const full: Transcript = { system, turns: parsed.turns };
  const rate = deps.calibration?.charsPerToken(keyId, backend.id, model);
  return { full, whole: tryFitContext(full, limit, deps.contextOverflow, rate), rate };
}

/** A conversation for one model: see `transcriptFor`. */
export interface ModelTranscript {
  full: Transcript;
  whole: Fitted;
  /** Characters per token for this key, backend and model (undefined: olp's default). */
  rate: number | undefined;
}

/**
 * What a finished turn tells the calibration: the characters of the conversation the provider
 * was sent (the whole re-sent transcript, or the CLI's session, which holds the full
 * conversation unless it compacted it) against the prompt tokens it reported.
 */
export function observeTokens(
  deps: ConversationDeps,
  keyId: string,
  backend: string,
  model: string,
  lease: Lease,
  c: ModelTranscript,
  usage: Usage | null,
): void {
  if (!deps.calibration || !usage || usage.promptTokens <= 0) return;
  const sentWhole = lease.plan.mode === 'ephemeral' || (lease.plan.mode === 'fresh' && !lease.plan.forkOf);
  const t = sentWhole && c.whole.ok ? c.whole.transcript : c.full;
  const tokens = usage.promptTokens - imageCount(t.turns) * 1000;
  deps.calibration.observe(keyId, backend, model, {
    chars: transcriptChars(t.turns, t.system),
    tokens,
    whole: sentWhole,
  });
}
