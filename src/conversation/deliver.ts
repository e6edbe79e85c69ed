import { planScope } from '../plan/index.js';
import type { BackendEvent } from '../backends/index.js';
import type { Stage } from './progress.js';
import type { ConversationEvent } from './types.js';

// How a turn's events reach the client as the conversation's (see forward.ts and forwarding.ts).

/** The answer's first sign announces it (headers); its text counts as sent (see `estimate`). */
export function* note(
  s: Stage,
  ev: BackendEvent & { type: 'text' | 'tool_call' | 'tool_args' | 'thinking' },
  model: string,
  backend: string,
): Generator<ConversationEvent> {
  const { deps, meta, p } = s;
  if (!p.started) {
    p.started = true;
    const session = p.session ?? { mode: 'ephemeral' };
    // The login's plan as last known (this turn's report may come only after its text).
    yield {
      type: 'started',
      model,
      backend,
      session,
      headers: {
        ...p.headers,
        ...deps.plans?.headers(planScope(backend, s.principal.login)),
        'x-olp-session-mode': session.mode,
      },
      promptTokens: p.promptTokens,
    };
  }
  p.firstTokenMs ??= performance.now() - meta.started;
  if (ev.type === 'text' || ev.type === 'tool_args') p.sentChars += ev.text.length;
}

/** One event on to the client; `noted` when `note` has seen it already (a held reply's). */
export function* pass(
  s: Stage,
  ev: BackendEvent,
  model: string,
  backend: string,
  noted = false,
): Generator<ConversationEvent> {
  if (ev.type === 'plan') {
    s.deps.plans?.report(planScope(backend, s.principal.login), ev.report);
    if (ev.report.overage) s.p.overage = true;
    return;
  }
  if (ev.type !== 'text' && ev.type !== 'tool_call' && ev.type !== 'tool_args' && ev.type !== 'thinking') return;
  if (!noted) yield* note(s, ev, model, backend);
  if (ev.type === 'thinking')
    yield { type: 'thinking', text: ev.text, ...(ev.signature ? { signature: ev.signature } : {}) };
  else yield ev.type === 'text' ? { type: 'text', text: ev.text } : ev;
}
