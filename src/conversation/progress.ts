import type { Principal } from '../auth/index.js';
import { END_TURN, type StopReason, type Usage } from '../backends/index.js';
import type { ProxyError } from '../errors/index.js';
import type { RunMode } from '../run/index.js';
import type { Lease } from '../sessions/index.js';
import type { ToolRequest } from '../tools/index.js';
import type { ConversationDeps, ConversationInput, ConversationResult, RequestMeta, SessionNote } from './types.js';

/** Everything a running conversation learns, turned into its immutable result at the end. */
export interface Progress {
  /** The model the client asked for (set when the conversation runs). */
  model: string | null;
  backend: string | null;
  servedModel: string | null;
  session: SessionNote | null;
  run: RunMode | null;
  queueMs: number | null;
  firstTokenMs: number | null;
  usage: Usage | null;
  stopReason: StopReason;
  error: ProxyError | null;
  aborted: boolean;
  /** A plan report during the turn said it drew on paid extra usage. */
  overage: boolean;
  started: boolean;
  promptTokens: number;
  sentChars: number;
  headers: Record<string, string>;
  /** The result, once written (see result.ts): it is written once. */
  result: ConversationResult | undefined;
}

/** A progress with nothing learnt yet. */
export function newProgress(): Progress {
  return {
    model: null,
    backend: null,
    servedModel: null,
    session: null,
    run: null,
    queueMs: null,
    firstTokenMs: null,
    usage: null,
    stopReason: END_TURN,
    error: null,
    aborted: false,
    started: false,
    promptTokens: 0,
    sentChars: 0,
    headers: {},
    overage: false,
    result: undefined,
  };
}

/** What each stage of a running conversation is given: whose request, how it came, what it asks, and its progress. */
export interface Stage {
  readonly deps: ConversationDeps;
  readonly principal: Principal;
  readonly meta: RequestMeta;
  readonly input: ConversationInput;
  readonly p: Progress;
}

/** The request's tools, when the bridge runs (both CLIs offer them through it). */
export function toolsFor(s: Stage): ToolRequest | undefined {
  return s.input.tools && s.deps.runner.servesTools ? s.input.tools : undefined;
}

/** The session a turn ran under, as the result and the headers name it. */
export function toSessionNote(lease: Lease, nativeId?: string): SessionNote {
  const p = lease.plan;
  const id = nativeId ?? p.sessionId;
  const diverged = p.diverged ? { diverged: { at: p.diverged.at, why: p.diverged.why } } : {};
  return { mode: p.mode, ...(id ? { id } : {}), ...(p.reason ? { reason: p.reason } : {}), ...diverged };
}
