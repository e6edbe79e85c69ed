import type { ForkSupport } from '../backends/index.js';
import type { SlotRecord } from '../store/index.js';
import { renderTurns, type Fitted, type Transcript, type Turn } from '../transcript/index.js';

export type RotationReason =
  | 'initial'
  | 'divergent'
  | 'system_changed'
  | 'lifetime'
  | 'turn_cap'
  | 'idle'
  | 'failed'
  | 'aborted'
  | 'operator'
  | 'resume_failed'
  /** The request brought tool results, and the CLI that waited for them is gone. */
  | 'parked_gone';

/**
 * Rotations whose new session may start as a continuation of the old one (a fork) instead of a
 * re-sent transcript: the conversation is the one the CLI's session holds, turn for turn, and
 * that session ended its last turn cleanly. Past a lifetime, a turn cap or an idle gap nothing
 * about the history changed. Not on a changed system prompt: a resumed or forked session keeps
 * the one it started with (claude 2.1.332, codex 0.171: the new one never reaches the model),
 * nor after a failed or aborted turn (the CLI's copy may hold that turn's prompt or half a
 * reply), nor for a conversation no slot holds, nor after a refused resume or an operator's
 * rotation.
 */
export const FORKABLE: ReadonlySet<RotationReason> = new Set(['lifetime', 'turn_cap', 'idle']);

/** The transcript as sent whole when nothing says otherwise: untrimmed. */
export function asWhole(transcript: Transcript): Fitted {
  return { ok: true, transcript: { ...transcript, omitted: transcript.omitted ?? 0 }, tokens: 0 };
}

/** The plan text of a whole (re-sent) conversation; throws when it does not fit the model. */
export function wholePlan(whole: Fitted): { text: string; turns: Turn[] } {
  if (!whole.ok) throw whole.error;
  return { text: renderTurns(whole.transcript.turns, whole.transcript.omitted), turns: whole.transcript.turns };
}

/**
 * The session a rotated slot held, when only its files need to go: its last turn ended cleanly
 * (a failed or aborted turn may have left files under an id olp never learnt, codex's own), and
 * it is not a fork that still reads the sessions it came from (`keepsSource`: those go too).
 */
export function previousOf(slot: SlotRecord, fork: ForkSupport | undefined): { previousSessionId?: string } {
  if (fork?.keepsSource && slot.lastReason !== null && FORKABLE.has(slot.lastReason as RotationReason)) return {};
  return slot.sessionId !== null && !slot.dirty ? { previousSessionId: slot.sessionId } : {};
}
