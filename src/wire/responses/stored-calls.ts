import { patchArguments, shellArguments } from './sdk-tools.js';
import { qualifiedName } from './tools.js';

/**
 * A stored output item of a tool call as the call the model made: the function it was offered
 * as (a namespace's under its qualified name) and the arguments it gave, as the echo of that item
 * would be read (see `parseResponsesRequest`). Undefined for an item that is no call.
 */
export function callOfItem(o: Record<string, unknown>): { id: string; name: string; arguments: string } | undefined {
  if (typeof o.call_id !== 'string' || !o.call_id) return undefined;
  const named = (name: unknown) =>
    typeof name !== 'string' || !name
      ? undefined
      : typeof o.namespace === 'string' && o.namespace
        ? qualifiedName(o.namespace, name)
        : name;
  switch (o.type) {
    case 'shell_call':
      return {
        id: o.call_id,
        name: 'shell',
        arguments: shellArguments(o.action as Parameters<typeof shellArguments>[0]),
      };
    case 'apply_patch_call':
      return {
        id: o.call_id,
        name: 'apply_patch',
        arguments: patchArguments(o.operation as Parameters<typeof patchArguments>[0]),
      };
    case 'custom_tool_call': {
      const name = named(o.name);
      return name
        ? { id: o.call_id, name, arguments: JSON.stringify({ input: typeof o.input === 'string' ? o.input : '' }) }
        : undefined;
    }
    case 'function_call': {
      const name = named(o.name);
      return name
        ? { id: o.call_id, name, arguments: typeof o.arguments === 'string' ? o.arguments : '{}' }
        : undefined;
    }
    default:
      return undefined;
  }
}
