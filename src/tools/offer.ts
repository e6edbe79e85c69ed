import { invalidRequest } from '../errors/index.js';
import type { OfferedFunction, ToolOffer, ToolRequest, ToolSpec } from './spec.js';

/** OpenAI's rule for function names (olp offers every format's tools by it). */
export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The request's tools as the core takes them, checked as OpenAI checks functions (a 400 naming the
 * param): undefined when none are offered, or the choice is `none` (the model then sees none).
 */
export function toolRequest(offer: ToolOffer): ToolRequest | undefined {
  const { functions, choice, parallel, choiceAt, listAt } = offer;
  if (functions === undefined) {
    if (choice !== 'none' && choice !== 'auto')
      throw invalidRequest(
        `Invalid value for '${choiceAt}': '${choiceAt}' is only allowed when '${listAt}' are specified.`,
        choiceAt,
      );
    return undefined;
  }
  if (functions.length > 128)
    throw invalidRequest(`Invalid '${listAt}': at most 128 tools may be offered, got ${functions.length}.`, listAt);
  const seen = new Set<string>();
  const tools = functions.map((fn) => toSpec(fn, listAt, seen));
  if (typeof choice === 'object' && 'allowed' in choice) {
    for (const name of choice.allowed) {
      if (!seen.has(name))
        throw invalidRequest(
          `Invalid value for '${choiceAt}': it allows a function named '${name}', ` +
            `and none of that name was given in '${listAt}'.`,
          choiceAt,
        );
    }
    return { tools: tools.filter((t) => choice.allowed.includes(t.name)), choice: choice.mode, parallel };
  }
  if (typeof choice === 'object' && !seen.has(choice.name))
    throw invalidRequest(
      `Invalid value for '${choiceAt}': no function named '${choice.name}' was given in '${listAt}'.`,
      choiceAt,
    );
  if (choice === 'none' || tools.length === 0) return undefined;
  return { tools, choice, parallel };
}

/** One offered function, checked: its name by OpenAI's rule and once only, its schema an object schema. */
function toSpec(fn: OfferedFunction, listAt: string, seen: Set<string>): ToolSpec {
  const { at } = fn;
  if (typeof fn.name !== 'string' || !TOOL_NAME.test(fn.name))
    throw invalidRequest(
      `Invalid '${at}.name': expected 1 to 64 letters, digits, underscores or dashes.`,
      `${at}.name`,
    );
  if (seen.has(fn.name))
    throw invalidRequest(`Invalid '${listAt}': the function name '${fn.name}' is used twice.`, `${at}.name`);
  seen.add(fn.name);
  if (fn.description !== undefined && typeof fn.description !== 'string')
    throw invalidRequest(`Invalid type for '${at}.description': expected a string.`, `${at}.description`);
  const schemaAt = `${at}.${fn.schemaField ?? 'parameters'}`;
  const parameters = fn.parameters ?? { type: 'object', properties: {} };
  if (!parameters || typeof parameters !== 'object' || Array.isArray(parameters))
    throw invalidRequest(
      `Invalid schema for function '${fn.name}': '${schemaAt}' must be a JSON Schema object.`,
      schemaAt,
    );
  const type = (parameters as { type?: unknown }).type;
  if (type !== undefined && type !== 'object')
    throw invalidRequest(
      `Invalid schema for function '${fn.name}': schema must be a JSON Schema of 'type: "object"', ` +
        `got 'type: ${JSON.stringify(type)}'.`,
      schemaAt,
    );
  return {
    name: fn.name,
    ...(typeof fn.description === 'string' ? { description: fn.description } : {}),
    parameters: { type: 'object', ...(parameters as Record<string, unknown>) },
  };
}
