import type { ToolCall } from './shapes.js';

// A call of the client's tools as a Responses output item, in the shape of the tool it was made of.

/** A call of one of the client's functions, as an output item. */
export interface ResponseFunctionToolCall {
  id: string;
  type: 'function_call';
  call_id: string;
  name: string;
  arguments: string;
  status: 'in_progress' | 'completed' | 'incomplete';
}

/** A call of one of the client's function tools, as an output item (a namespace's names its namespace). */
export interface ResponseNamespacedCall extends ResponseFunctionToolCall {
  namespace?: string;
}

/** A call of one of the client's freeform (custom) tools: its one string input. */
export interface ResponseCustomToolCall {
  id: string;
  type: 'custom_tool_call';
  call_id: string;
  name: string;
  input: string;
  namespace?: string;
}

/** How a tool offered under one name goes back to the client (see the Responses adapter's toChatTools). */
export type CallWire =
  | { type: 'custom'; name: string; namespace?: string }
  | { type: 'function'; name: string; namespace: string };

/** A custom tool's one string, from the arguments the model gave the function it was offered as. */
export function customInput(args: string): string {
  try {
    const parsed = JSON.parse(args) as { input?: unknown };
    if (typeof parsed?.input === 'string') return parsed.input;
  } catch {
    // not JSON: the model wrote the input itself
  }
  return args;
}

/** A call item, complete: a function call (of a namespace, if so), or a custom tool's call. */
export function toFunctionCallItem(
  id: string,
  call: ToolCall,
  wire?: ReadonlyMap<string, CallWire>,
): ResponseNamespacedCall | ResponseCustomToolCall {
  const w = wire?.get(call.function.name);
  const ns = w?.namespace ? { namespace: w.namespace } : {};
  if (w?.type === 'custom')
    return {
      id,
      type: 'custom_tool_call',
      call_id: call.id,
      name: w.name,
      input: customInput(call.function.arguments),
      ...ns,
    };
  return {
    id,
    type: 'function_call',
    call_id: call.id,
    name: w?.name ?? call.function.name,
    arguments: call.function.arguments,
    status: 'completed',
    ...ns,
  };
}
