import type { ReasoningSetting } from '../../core/index.js';

// How codex takes a request's reasoning (codex-cli 0.171, checked with a loopback Responses
// stand-in): `model_reasoning_effort` is sent as the request's `reasoning.effort`, whatever its
// value (none, minimal, low, medium, high, xhigh and max alike; unset, the model's default). On
// `exec` (and `exec resume`) a `-c` override sets it for the run. An app-server resuming a
// thread does not take it from `-c`: only from thread/resume's `config` (or turn/start's
// `effort`, which then holds for the thread's later turns too). codex has no thinking budget;
// a budget of 0 (thinking off) is effort `none`.

/** The effort codex is given for a turn's reasoning; undefined for the model's own. */
export function codexEffort(r: ReasoningSetting | undefined): string | undefined {
  if (r?.budgetTokens === 0) return 'none';
  return r?.effort;
}

/** `exec`'s `-c` override for a turn's reasoning (none for the model's default). */
export function toEffortConfig(r: ReasoningSetting | undefined): string[] {
  const effort = codexEffort(r);
  return effort ? [`model_reasoning_effort=${JSON.stringify(effort)}`] : [];
}
