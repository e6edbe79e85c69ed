import type { Principal } from '../auth/index.js';
import { bounded } from '../log/index.js';
import type { Store } from '../store/index.js';
import type { ConversationResult, RequestMeta } from './types.js';

/**
 * The one ledger row of a key's request, from its result (any wire format). `reached`: the
 * client was sent part of a reply, or left while one was coming.
 */
export function recordResult(
  store: Store,
  principal: Principal,
  meta: RequestMeta,
  r: ConversationResult,
  reached: boolean,
  provider: string | null,
): void {
  const u = r.usage;
  try {
    store.usage.record({
      requestId: meta.requestId,
      ts: meta.startedAt,
      keyId: principal.keyId,
      keyName: principal.name,
      endpoint: meta.endpoint,
      backend: r.backend,
      provider,
      model: bounded(r.model),
      servedModel: bounded(r.backend ? (r.servedModel ?? r.model) : null),
      outcome: r.outcome,
      errorCode: r.error?.code ?? null,
      status: r.status,
      queueMs: r.queueMs,
      ttftMs: r.firstTokenMs != null ? Math.round(r.firstTokenMs) : null,
      durationMs: r.durationMs,
      promptTokens: u?.promptTokens ?? 0,
      completionTokens: u?.completionTokens ?? 0,
      cachedTokens: u?.cachedTokens ?? 0,
      reasoningTokens: u?.reasoningTokens ?? 0,
      rawUsage: u?.raw ?? null,
      partial: Boolean(u) && r.outcome !== 'ok',
      estimated: r.estimated,
      // Budgets count what reached the client: a finished reply, or the part of one it was sent.
      billable: r.outcome === 'ok' || (Boolean(u) && reached),
      costUsd: u?.costUsd ?? null,
      sessionId: r.session?.id ?? null,
      sessionMode: r.session?.mode ?? null,
      rotationReason: r.session?.reason ?? null,
      runMode: r.run,
      overage: r.overage,
      login: r.backend ? principal.login : null,
    });
  } catch (err) {
    meta.log.error({ err, event: 'usage_write_failed' }, 'could not write the usage row');
  }
}
