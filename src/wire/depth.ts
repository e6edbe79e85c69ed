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
const PARAM = new RegExp(
  String.raw`^(response_format\.json_schema\.schema|text\.format\.schema|` +
    String.raw`(?:tools|functions)\.\d+(?:\.function)?\.parameters|(?:messages|input|tools|functions)\.\d+|[^.]+)`,
);

/**
 * Whether a value nests deeper than `limit`; without recursion, so any depth is safe. Every body
 * takes this walk, so it allocates nothing per value beyond one stack of (value, depth) pairs and
 * never pushes an empty array: a hostile 10 MB body of 3.3 million `[]` walks in about 20 ms, and
 * of 500,000 small objects in a fraction of what its JSON.parse took.
 */
function tooDeep(body: unknown, limit: number): boolean {
  const stack: unknown[] = [body, 1];
  while (stack.length > 0) {
    const depth = stack.pop() as number;
    const value = stack.pop();
    if (depth > limit) return true;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const child: unknown = value[i];
        if (child !== null && typeof child === 'object' && !(Array.isArray(child) && child.length === 0))
          stack.push(child, depth + 1);
      }
    } else if (value !== null && typeof value === 'object') {
      for (const k in value) {
        const child = (value as Record<string, unknown>)[k];
        if (child !== null && typeof child === 'object' && !(Array.isArray(child) && child.length === 0))
          stack.push(child, depth + 1);
      }
    }
  }
  return false;
}

/** The path of one value nested deeper than `limit` (run only once `tooDeep` found one). */
function pathTooDeep(body: unknown, limit: number): string[] {
  const stack: { value: unknown; depth: number; path: string[] }[] = [{ value: body, depth: 1, path: [] }];
  while (stack.length > 0) {
    const { value, depth, path } = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (depth > limit) return path;
    for (const [k, child] of Object.entries(value))
      if (child !== null && typeof child === 'object')
        stack.push({ value: child, depth: depth + 1, path: [...path, k] });
  }
  return [];
}

/** Throws a 400 naming the field when a body nests deeper than MAX_JSON_DEPTH; run before anything walks it. */
export function checkDepth(body: unknown, limit = MAX_JSON_DEPTH): void {
  if (!tooDeep(body, limit)) return;
  const path = pathTooDeep(body, limit);
  const dotted = PARAM.exec(path.join('.'))?.[1] ?? path[0] ?? '';
  // Tool fields are named as the tools module names them (`tools[0].function.parameters`).
  const param = dotted.replace(/^(tools|functions)\.(\d+)/, '$1[$2]');
  throw invalidRequest(
    `Invalid value for '${param}': it nests objects and arrays more than ${limit} levels deep, olp's limit for ` +
      `a request.`,
    param,
  );
}
