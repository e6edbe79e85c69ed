import type { ToolRequest, ToolSpec } from './spec.js';

export { createToolBridge, type ToolBridge, type BridgeSession, type PendingCall } from './bridge.js';
export { createParkedTurns, type ParkedTurns, type ParkedTurn } from './parked.js';
export type { OfferedChoice, OfferedFunction, ToolChoice, ToolOffer, ToolRequest, ToolSpec } from './spec.js';
export { toolRequest, TOOL_NAME } from './offer.js';

/** The tools the model is offered for a choice: only the named one for a named choice. */
export function offeredTools(t: ToolRequest): ToolSpec[] {
  return typeof t.choice === 'object' ? t.tools.filter((x) => x.name === (t.choice as { name: string }).name) : t.tools;
}

/** What the system prompt adds for a choice the CLI cannot enforce by itself. */
export function choiceInstruction(t: ToolRequest): string | undefined {
  if (t.choice === 'required')
    return 'You must answer by calling one or more of the available tools; do not answer with text alone.';
  if (typeof t.choice === 'object') return `You must answer by calling the tool "${t.choice.name}".`;
  if (!t.parallel) return 'Call at most one tool at a time.';
  return undefined;
}
