import { invalidRequest } from '../errors/index.js';

/**
 * The deepest nesting of objects and arrays a request body may have (the body itself is level 1).
 * olp walks parts of a body recursively after validation (a schema is serialised into the
 * system prompt and its hash, rewritten for codex, echoed in a Response; a tool's parameters
 * are served to the CLI), and V8's JSON.stringify runs out of stack a few thousand levels down.
 * OpenAI allows 10 levels of schema nesting in strict mode (about 20 here); real tool schemas
 * stay well under this.
 */
export const MAX_JSON_DEPTH = 128;

// A too-deep value is reported at the field a client wrote: a schema or a tool's parameters
// whole, else the input item or message, else the top-level field.
const PARAM = /^(response_format\.json_schema\.schema|text\.format\.schema|(?:tools|functions)\.\d+(?:\.function)?\.parameters|(?:messages|input|tools|functions)\.\d+|[^.]+)/;

/** The path of one value nested deeper than `limit`, or undefined; without recursion, so any depth is safe. */
function findTooDeep(body: unknown, limit: number): string[] | undefined {
  // Depth-first with explicit stacks; parents are kept only to name the path of the value found.
  const values: unknown[] = [body];
  const depths: number[] = [1];
  const parents: number[] = [-1];
  const keys: string[] = [''];
  const seenParent: number[] = [];
  const seenKey: string[] = [];
  while (values.length > 0) {
    const value = values.pop();
    const depth = depths.pop()!;
    const parent = parents.pop()!;
    const key = keys.pop()!;
    if (value === null || typeof value !== 'object') continue;
    const at = seenParent.push(parent) - 1;
    seenKey.push(key);
    if (depth > limit) {
      const path: string[] = [];
      for (let i = at; i > 0; i = seenParent[i]!) path.unshift(seenKey[i]!);
      return path;
    }
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const child: unknown = value[i];
        if (child !== null && typeof child === 'object') {
          values.push(child);
          depths.push(depth + 1);
          parents.push(at);
          keys.push(String(i));
        }
      }
    } else {
      for (const k of Object.keys(value)) {
        const child = (value as Record<string, unknown>)[k];
        if (child !== null && typeof child === 'object') {
          values.push(child);
          depths.push(depth + 1);
          parents.push(at);
          keys.push(k);
        }
      }
    }
  }
  return undefined;
}

/** Throws a 400 naming the field when a body nests deeper than MAX_JSON_DEPTH; run before anything walks it. */
export function checkDepth(body: unknown, limit = MAX_JSON_DEPTH): void {
  const path = findTooDeep(body, limit);
  if (!path) return;
  const dotted = PARAM.exec(path.join('.'))?.[1] ?? path[0] ?? '';
  // Tool fields are named as the tools module names them (`tools[0].function.parameters`).
  const param = dotted.replace(/^(tools|functions)\.(\d+)/, '$1[$2]');
  throw invalidRequest(`Invalid value for '${param}': it nests objects and arrays more than ${limit} levels deep, olp's limit for a request.`, param);
}
