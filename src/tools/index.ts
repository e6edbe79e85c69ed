import { invalidRequest } from '../errors/index.js';
import type { ToolChoice, ToolRequest, ToolSpec } from './spec.js';

export { createToolBridge, type ToolBridge, type BridgeSession, type PendingCall } from './bridge.js';
export { createParkedTurns, type ParkedTurns, type ParkedTurn } from './parked.js';
export type { ToolChoice, ToolRequest, ToolSpec } from './spec.js';

/** OpenAI's rule for function names. */
const NAME = /^[A-Za-z0-9_-]{1,64}$/;

interface RawTools {
  tools?: unknown;
  tool_choice?: unknown;
  parallel_tool_calls?: unknown;
  functions?: unknown;
  function_call?: unknown;
}

/**
 * The request's functions and tool choice, checked as OpenAI checks them (a 400 naming the param):
 * `tools` of type `function`, or the legacy `functions` / `function_call`. Undefined when the
 * request offers no tools, or `tool_choice: "none"` (the model then sees none).
 */
export function parseToolRequest(req: RawTools): ToolRequest | undefined {
  const legacy = req.tools === undefined && req.functions !== undefined;
  const raw = legacy ? req.functions : req.tools;
  if (raw === undefined || raw === null) {
    if (req.tool_choice !== undefined && req.tool_choice !== 'none' && req.tool_choice !== 'auto') {
      throw invalidRequest(
        "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
        'tool_choice',
      );
    }
    return undefined;
  }
  const param = legacy ? 'functions' : 'tools';
  if (!Array.isArray(raw)) throw invalidRequest(`Invalid type for '${param}': expected an array.`, param);
  if (raw.length > 128)
    throw invalidRequest(`Invalid '${param}': at most 128 tools may be offered, got ${raw.length}.`, param);
  const seen = new Set<string>();
  const tools = raw.map((entry: unknown, i): ToolSpec => {
    const at = `${param}[${i}]`;
    const e = entry as { type?: unknown; function?: unknown } | null;
    if (!e || typeof e !== 'object') throw invalidRequest(`Invalid type for '${at}': expected an object.`, at);
    let fn: Record<string, unknown>;
    if (legacy) fn = e as Record<string, unknown>;
    else {
      if (e.type !== 'function')
        throw invalidRequest(
          `Invalid value for '${at}.type': olp serves function tools only; got ${JSON.stringify(e.type)}.`,
          `${at}.type`,
        );
      if (!e.function || typeof e.function !== 'object')
        throw invalidRequest(`Missing required parameter: '${at}.function'.`, `${at}.function`);
      fn = e.function as Record<string, unknown>;
    }
    const fnAt = legacy ? at : `${at}.function`;
    if (typeof fn.name !== 'string' || !NAME.test(fn.name)) {
      throw invalidRequest(
        `Invalid '${fnAt}.name': expected 1 to 64 letters, digits, underscores or dashes.`,
        `${fnAt}.name`,
      );
    }
    if (seen.has(fn.name))
      throw invalidRequest(`Invalid '${param}': the function name '${fn.name}' is used twice.`, `${fnAt}.name`);
    seen.add(fn.name);
    if (fn.description !== undefined && typeof fn.description !== 'string')
      throw invalidRequest(`Invalid type for '${fnAt}.description': expected a string.`, `${fnAt}.description`);
    const parameters = fn.parameters ?? { type: 'object', properties: {} };
    if (!parameters || typeof parameters !== 'object' || Array.isArray(parameters)) {
      throw invalidRequest(
        `Invalid schema for function '${fn.name}': '${fnAt}.parameters' must be a JSON Schema object.`,
        `${fnAt}.parameters`,
      );
    }
    const type = (parameters as { type?: unknown }).type;
    if (type !== undefined && type !== 'object') {
      throw invalidRequest(
        `Invalid schema for function '${fn.name}': schema must be a JSON Schema of 'type: "object"', ` +
          `got 'type: ${JSON.stringify(type)}'.`,
        `${fnAt}.parameters`,
      );
    }
    return {
      name: fn.name,
      ...(typeof fn.description === 'string' ? { description: fn.description } : {}),
      parameters: { type: 'object', ...(parameters as Record<string, unknown>) },
    };
  });
  const parallel = req.parallel_tool_calls !== false;
  const allowed = legacy ? undefined : parseAllowedTools(req.tool_choice, seen);
  if (allowed) return { tools: tools.filter((t) => allowed.names.has(t.name)), choice: allowed.mode, parallel };
  const choice = parseChoice(
    legacy ? req.function_call : req.tool_choice,
    legacy ? 'function_call' : 'tool_choice',
    seen,
  );
  if (choice === 'none' || tools.length === 0) return undefined;
  return { tools, choice, parallel };
}

/**
 * `tool_choice: {type: "allowed_tools", allowed_tools: {mode, tools: [{type: "function", function: {name}}]}}`:
 * only those functions are offered, `mode` (auto or required) applies to them. Undefined for any other choice.
 */
function parseAllowedTools(
  raw: unknown,
  names: ReadonlySet<string>,
): { names: Set<string>; mode: 'auto' | 'required' } | undefined {
  const choice = raw as { type?: unknown; allowed_tools?: { mode?: unknown; tools?: unknown } } | null;
  if (!choice || typeof choice !== 'object' || choice.type !== 'allowed_tools') return undefined;
  const at = 'tool_choice.allowed_tools';
  const spec = choice.allowed_tools;
  if (!spec || typeof spec !== 'object') throw invalidRequest(`Missing required parameter: '${at}'.`, at);
  if (spec.mode !== 'auto' && spec.mode !== 'required')
    throw invalidRequest(`Invalid value for '${at}.mode': expected 'auto' or 'required'.`, `${at}.mode`);
  if (!Array.isArray(spec.tools) || spec.tools.length === 0)
    throw invalidRequest(`Invalid value for '${at}.tools': expected a non-empty array of tools.`, `${at}.tools`);
  const allowed = new Set<string>();
  (spec.tools as unknown[]).forEach((entry, i) => {
    const tool = entry as { type?: unknown; function?: { name?: unknown } } | null;
    const name = tool?.type === 'function' ? tool.function?.name : undefined;
    if (typeof name !== 'string')
      throw invalidRequest(
        `Invalid value for '${at}.tools[${i}]': expected {"type": "function", "function": {"name": …}}.`,
        `${at}.tools[${i}]`,
      );
    // Worded without the request's shape: the Responses endpoint comes through here too.
    if (!names.has(name))
      throw invalidRequest(
        `Invalid value for 'tool_choice': it allows a function named '${name}', ` +
          "and none of that name was given in 'tools'.",
        'tool_choice',
      );
    allowed.add(name);
  });
  return { names: allowed, mode: spec.mode };
}

function parseChoice(raw: unknown, param: string, names: ReadonlySet<string>): ToolChoice {
  if (raw === undefined || raw === null || raw === 'auto') return 'auto';
  if (raw === 'none' || raw === 'required') return raw;
  const named = raw as { type?: unknown; function?: { name?: unknown }; name?: unknown };
  const name = param === 'function_call' ? named.name : named.type === 'function' ? named.function?.name : undefined;
  if (typeof name !== 'string') {
    const shapes =
      param === 'function_call'
        ? '{"name": …}'
        : '{"type": "function", "function": {"name": …}} or ' +
          '{"type": "allowed_tools", "allowed_tools": {"mode": …, "tools": […]}}';
    throw invalidRequest(`Invalid value for '${param}': expected 'none', 'auto', 'required' or ${shapes}.`, param);
  }
  if (!names.has(name))
    throw invalidRequest(
      `Invalid value for '${param}': no function named '${name}' was given in ` +
        `'${param === 'function_call' ? 'functions' : 'tools'}'.`,
      param,
    );
  return { name };
}

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
