import type { z } from 'zod';

/** Dotted OpenAI-style param for a zod issue path (`messages.2.content`). */
export function toParam(path: readonly PropertyKey[]): string | null {
  return path.length === 0 ? null : path.map(String).join('.');
}

/** A JSON value's type in OpenAI's words ("a string", "an integer", "a decimal"). */
export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a decimal';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'boolean') return 'a boolean';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

const EXPECTED: Record<string, string> = {
  string: 'a string',
  boolean: 'a boolean',
  number: 'a number',
  int: 'an integer',
  array: 'an array',
  object: 'an object',
  record: 'an object',
};

function describe(issue: z.core.$ZodIssue, param: string | null): string {
  // Every parse reports its input, so an issue without one is about a field left out.
  if (issue.code === 'invalid_union' && issue.input === undefined && param)
    return `Missing required parameter: '${param}'.`;
  if (issue.code === 'invalid_type') {
    if (issue.input === undefined) return `Missing required parameter: '${param}'.`;
    // OpenAI's wording for a value of the wrong type (parses need `reportInput` for `input`).
    const expected = EXPECTED[issue.expected];
    if (expected && param)
      return `Invalid type for '${param}': expected ${expected}, but got ${describeType(issue.input)} instead.`;
  }
  return param ? `Invalid value for '${param}': ${issue.message}.` : `Invalid request body: ${issue.message}.`;
}

/**
 * A union reports one issue for all its branches; when one branch got further into the value
 * (a content array with one bad part), its issue is the useful one.
 */
function specific(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== 'invalid_union' || !('errors' in issue)) return issue;
  let best: z.core.$ZodIssue | undefined;
  for (const branch of issue.errors) {
    for (const sub of branch) {
      if (sub.path.length === 0) continue;
      const deeper = specific({ ...sub, path: [...issue.path, ...sub.path] } as z.core.$ZodIssue);
      if (!best || deeper.path.length > best.path.length) best = deeper;
    }
  }
  return best ?? issue;
}

/**
 * The deepest, most specific issue of a failed parse (the one a person can act on), as a
 * message and its `param`; `prefix` places a nested value's path (`input.3`).
 */
export function firstIssue(error: z.ZodError, prefix?: string): [message: string, param: string | null] {
  const issue = error.issues.map((i) => specific(i)).sort((a, b) => b.path.length - a.path.length)[0]!;
  const param = toParam(prefix ? [prefix, ...issue.path] : issue.path);
  return [describe(issue, param), param];
}
