import type { CallText, Turn } from '../transcript/index.js';
import type { Divergence } from './divergence.js';
import type { RotationReason } from './rotation.js';

export type SessionMode = 'fresh' | 'resumed' | 'ephemeral';

/** What this request sends, and how the CLI should treat its session. */
export interface SessionPlan {
  mode: SessionMode;
  /** `fresh`: the new id to create; `resumed`: the id to resume; `ephemeral`: none. */
  sessionId?: string;
  /** The slot index, for a stable per-slot workspace. */
  slot?: number;
  /** stdin text: the whole rendered conversation (fresh, ephemeral) or only the new user turns (resumed). */
  text: string;
  /** The turns that text renders (their images go with them). */
  turns: Turn[];
  /** Why the slot was rotated (fresh only). */
  reason?: RotationReason;
  /** A new conversation (fresh only): where it parts from the closest one a slot holds, for the log. */
  diverged?: Divergence;
  /**
   * Resumed only: the system prompt the session's CLI has, which the turn keeps, when the
   * request's has only drifted from it (see system-drift.ts).
   */
  keptSystem?: string;
  /**
   * Fresh only: the slot's old session, which the new one continues (a fork: claude's `--resume
   * <old> --fork-session --session-id <new>`, codex's `exec fork <old>`); `text` and `turns` are
   * then only the new user turns, as for a resumed plan. See `ForkSupport` for its files.
   */
  forkOf?: string;
  /**
   * Fresh only: the session the slot held, when its files are known to carry this id (the last
   * turn ended cleanly). Only they are deleted then; otherwise the slot's whole session store goes.
   */
  previousSessionId?: string;
  /** The session's running usage total so far (resumed, or a fork's source), to subtract from a CLI's total. */
  usageBase?: Readonly<Record<string, number>>;
}

/** A slot held by one request; released in the function that took it. */
export interface Lease {
  readonly plan: SessionPlan;
  /** Turns a refused resume into a rotation of the same slot (whole transcript, new id). */
  rotate(reason: RotationReason): void;
  /** Records how the turn ended: a reply extends the fingerprint; a failure makes the slot rotate next time. */
  commit(
    result:
      | {
          ok: true;
          reply: string;
          /** The calls of the client's functions the reply ended in (the conversation goes on with their results). */
          calls?: readonly CallText[];
          rawUsage?: Record<string, number>;
          sessionId?: string;
        }
      | { ok: false; aborted: boolean },
  ): void;
  release(): void;
}
