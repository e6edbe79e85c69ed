import { randomText } from '../../ids/index.js';
import type { BackendEvent, ToolStep } from '../types.js';

/** One turn's calls of the client's functions, as either codex parser reads them. */
export interface ToolCalls {
  /** The open step: the calls since the turn began or last went on. */
  readonly step: ToolStep | undefined;
  /** A call codex started (its item id, once): `tool_call` + `tool_args`, and the step grows. */
  start(itemId: string, name: string, args: unknown): BackendEvent[];
  /** The turn goes on with the client's results: the next calls make a new step. */
  next(): void;
}

/**
 * Keeps the calls of olp's MCP server a codex turn makes. codex 0.171 reports an MCP call whole
 * as it makes it (no streamed arguments), one item per call, in `exec --json` and the app-server
 * alike; parallel calls start together. The step stays open (see ToolStep): where the model's
 * message ends is not reported. olp names each call itself (`call_<random>`): codex's item ids
 * are not unique beyond the run (`item_0`, or the provider's call ids).
 *
 * A started call is never taken back: when the provider's stream breaks after the model's call
 * was complete, codex still makes the call, waits for its result, and only then asks the model
 * again with the call and its result in the input (0.171, exec and app-server alike, captured).
 */
export function createToolCalls(): ToolCalls {
  let calls: ToolStep['calls'] = [];
  let step: ToolStep | undefined;
  const started = new Set<string>();
  return {
    get step() {
      return step;
    },
    start(itemId, name, args) {
      if (started.has(itemId)) return [];
      started.add(itemId);
      const index = calls.length;
      const call = { id: `call_${randomText(12, 'base64url')}`, name, arguments: JSON.stringify(args ?? {}) };
      calls.push(call);
      step = { calls: [...calls], usage: null, open: true };
      return [
        { type: 'tool_call', index, id: call.id, name: call.name },
        { type: 'tool_args', index, text: call.arguments },
      ];
    },
    next() {
      step = undefined;
      calls = [];
    },
  };
}
