import type { ToolCall } from '../chat/shapes.js';

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

/** A call of the client's local shell (the Agents SDK's `shell` tool): the commands to run, in order. */
export interface ResponseFunctionShellToolCall {
  id: string;
  type: 'shell_call';
  call_id: string;
  action: { commands: string[]; timeout_ms: number | null; max_output_length: number | null };
  environment: null;
  status: 'in_progress' | 'completed' | 'incomplete';
}

/** A call of the client's `apply_patch` tool: one file created, updated (by a V4A diff) or deleted. */
export interface ResponseApplyPatchToolCall {
  id: string;
  type: 'apply_patch_call';
  call_id: string;
  operation:
    | { type: 'create_file' | 'update_file'; path: string; diff: string }
    | { type: 'delete_file'; path: string };
  status: 'in_progress' | 'completed';
}

/** Any call of the client's tools, as an output item. */
export type ResponseToolCallItem =
  | ResponseNamespacedCall
  | ResponseCustomToolCall
  | ResponseFunctionShellToolCall
  | ResponseApplyPatchToolCall;

/** How a tool offered under one name goes back to the client (see the Responses adapter's toToolOffer). */
export type CallWire =
  | { type: 'custom'; name: string; namespace?: string }
  | { type: 'function'; name: string; namespace: string }
  | { type: 'shell' | 'apply_patch'; name: string; namespace?: undefined };

/** A custom tool's one string, from the arguments the model gave the function it was offered as. */
export function customInput(args: string): string {
  const { input } = argsObject(args);
  // Not JSON of that shape: the model wrote the input itself.
  return typeof input === 'string' ? input : args;
}

/** The arguments the model gave, as an object (nothing usable: empty). */
function argsObject(args: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(args) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // unfinished or not JSON
  }
  return {};
}

/**
 * A shell call's action from the arguments of the `shell` function (one command given as a string
 * is a list of one).
 */
export function toShellAction(args: string): ResponseFunctionShellToolCall['action'] {
  const a = argsObject(args);
  const commands = typeof a.commands === 'string' ? [a.commands] : Array.isArray(a.commands) ? a.commands : [];
  return {
    commands: commands.filter((c): c is string => typeof c === 'string'),
    timeout_ms: typeof a.timeout_ms === 'number' ? a.timeout_ms : null,
    max_output_length: null,
  };
}

/** A patch call's operation from the arguments of the `apply_patch` function (a delete carries no diff). */
export function toPatchOperation(args: string): ResponseApplyPatchToolCall['operation'] {
  const a = argsObject(args);
  const path = typeof a.path === 'string' ? a.path : '';
  if (a.type === 'delete_file') return { type: 'delete_file', path };
  return {
    type: a.type === 'create_file' ? 'create_file' : 'update_file',
    path,
    diff: typeof a.diff === 'string' ? a.diff : '',
  };
}

/**
 * A call item, complete: a function call (of a namespace, if so), a custom tool's call, or a call
 * of the client's shell or apply_patch tool.
 */
export function toFunctionCallItem(
  id: string,
  call: ToolCall,
  wire?: ReadonlyMap<string, CallWire>,
): ResponseToolCallItem {
  const w = wire?.get(call.function.name);
  if (w?.type === 'shell')
    return {
      id,
      type: 'shell_call',
      call_id: call.id,
      action: toShellAction(call.function.arguments),
      environment: null,
      status: 'completed',
    };
  if (w?.type === 'apply_patch')
    return {
      id,
      type: 'apply_patch_call',
      call_id: call.id,
      operation: toPatchOperation(call.function.arguments),
      status: 'completed',
    };
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
