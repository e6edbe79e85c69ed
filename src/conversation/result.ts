import { planScope } from '../plan/index.js';
import type { Principal } from '../auth/index.js';
import type { Usage } from '../backends/index.js';
import { charsToTokens } from '../transcript/index.js';
import { recordResult } from './ledger.js';
import type { Progress } from './progress.js';
import type { ConversationDeps, ConversationResult, FinishedRequest, Outcome, RequestMeta } from './types.js';

/**
 * The conversation's result, written once from its progress. Off the response path (the client
 * has its answer first) its ledger row is written and it is published on `deps.finished`.
 */
export function finish(
  deps: ConversationDeps,
  principal: Principal,
  meta: RequestMeta,
  p: Progress,
): ConversationResult {
  if (p.result) return p.result;
  // A reply cut at a stop sequence while it streamed ends its CLI before it reports usage.
  const cut = p.stopReason.type === 'stop_sequence';
  const estimated = !p.usage && p.sentChars > 0 && (p.aborted || p.error !== null || cut);
  const usage: Usage | null = estimated ? estimate(p.promptTokens, p.sentChars) : p.usage;
  const outcome: Outcome = p.aborted
    ? 'client_aborted'
    : !p.error
      ? 'ok'
      : p.error.code === 'backend_timeout'
        ? 'timeout'
        : p.backend === null
          ? 'rejected'
          : 'error';
  const status = p.aborted ? 499 : !p.error ? 200 : meta.stream && p.started ? 200 : p.error.status;
  const result: ConversationResult = Object.freeze({
    outcome,
    error: p.error,
    stopReason: p.error ? ({ type: 'error' } as const) : p.stopReason,
    usage,
    estimated,
    model: p.model,
    backend: p.backend,
    servedModel: p.servedModel,
    session: p.session,
    run: p.run,
    overage: p.overage,
    queueMs: p.queueMs,
    firstTokenMs: p.firstTokenMs,
    durationMs: Math.round(performance.now() - meta.started),
    status,
    headers: {
      ...p.headers,
      ...(p.backend ? deps.plans?.headers(planScope(p.backend, principal.login)) : {}),
      ...(p.session ? { 'x-olp-session-mode': p.session.mode } : {}),
    },
  });
  p.result = result;
  const provider = deps.backends.find((b) => b.id === result.backend)?.owner ?? null;
  setImmediate(() => {
    recordResult(deps.store, principal, meta, result, p.sentChars > 0 || p.aborted, provider);
    if (deps.finished?.hasSubscribers) deps.finished.publish({ principal, meta, result } satisfies FinishedRequest);
  });
  return result;
}

/** olp's estimate for a client that left before the CLI reported usage: prompt and sent text. */
function estimate(promptTokens: number, sentChars: number): Usage {
  const completionTokens = charsToTokens(sentChars);
  return {
    promptTokens,
    completionTokens,
    totalTokens: promptTokens + completionTokens,
    cachedTokens: 0,
    reasoningTokens: 0,
    raw: {},
  };
}
