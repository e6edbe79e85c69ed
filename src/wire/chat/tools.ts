import { invalidRequest } from '../../errors/index.js';
import { type OfferedChoice, type OfferedFunction, type ToolRequest, toolRequest } from '../../tools/index.js';

/** A chat request's tool fields: `tools` and `tool_choice`, or the legacy `functions` and `function_call`. */
export interface ChatTools {
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
export function parseChatTools(req: ChatTools): ToolRequest | undefined {
  const legacy = req.tools === undefined && req.functions !== undefined;
  const listAt = legacy ? 'functions' : 'tools';
  const choiceAt = legacy ? 'function_call' : 'tool_choice';
  const raw = legacy ? req.functions : req.tools;
  if (raw !== undefined && raw !== null && !Array.isArray(raw))
    throw invalidRequest(`Invalid type for '${listAt}': expected an array.`, listAt);
  const functions =
    raw == null ? undefined : (raw as unknown[]).map((e, i) => toFunction(e, `${listAt}[${i}]`, legacy));
  const choiceRaw = legacy ? req.function_call : req.tool_choice;
  const choice = functions === undefined ? looseChoice(choiceRaw) : parseChoice(choiceRaw, choiceAt, legacy);
  return toolRequest({ functions, listAt, choice, choiceAt, parallel: req.parallel_tool_calls !== false });
}

/** One entry of `tools` (`{type: "function", function: {…}}`) or of the legacy `functions` (the function itself). */
function toFunction(entry: unknown, at: string, legacy: boolean): OfferedFunction {
  const e = entry as { type?: unknown; function?: unknown } | null;
  if (!e || typeof e !== 'object') throw invalidRequest(`Invalid type for '${at}': expected an object.`, at);
  const fn = (legacy ? e : e.function) as Record<string, unknown>;
  if (legacy) return { at, name: fn.name, description: fn.description, parameters: fn.parameters };
  if (e.type !== 'function')
    throw invalidRequest(
      `Invalid value for '${at}.type': olp serves function tools only; got ${JSON.stringify(e.type)}.`,
      `${at}.type`,
    );
  if (!e.function || typeof e.function !== 'object')
    throw invalidRequest(`Missing required parameter: '${at}.function'.`, `${at}.function`);
  return { at: `${at}.function`, name: fn.name, description: fn.description, parameters: fn.parameters };
}

/** A choice sent without tools: only `none` and `auto` pass (the rest is refused as OpenAI does). */
function looseChoice(raw: unknown): OfferedChoice {
  return raw === undefined || raw === null || raw === 'auto' ? 'auto' : raw === 'none' ? 'none' : 'required';
}

/**
 * `tool_choice`: `none`, `auto`, `required`, `{type: "function", function: {name}}`, or
 * `{type: "allowed_tools", allowed_tools: {mode, tools: [{type: "function", function: {name}}]}}`
 * (only those functions are offered, `mode` applies to them); the legacy `function_call` names
 * one function as `{name}`.
 */
function parseChoice(raw: unknown, param: string, legacy: boolean): OfferedChoice {
  if (raw === undefined || raw === null || raw === 'auto') return 'auto';
  if (raw === 'none' || raw === 'required') return raw;
  const named = raw as { type?: unknown; function?: { name?: unknown }; name?: unknown; allowed_tools?: unknown };
  if (!legacy && named && typeof named === 'object' && named.type === 'allowed_tools')
    return parseAllowed(named.allowed_tools);
  const name = legacy ? named?.name : named?.type === 'function' ? named.function?.name : undefined;
  if (typeof name !== 'string') {
    const shapes = legacy
      ? '{"name": …}'
      : '{"type": "function", "function": {"name": …}} or ' +
        '{"type": "allowed_tools", "allowed_tools": {"mode": …, "tools": […]}}';
    throw invalidRequest(`Invalid value for '${param}': expected 'none', 'auto', 'required' or ${shapes}.`, param);
  }
  return { name };
}

function parseAllowed(raw: unknown): OfferedChoice {
  const at = 'tool_choice.allowed_tools';
  const spec = raw as { mode?: unknown; tools?: unknown } | null;
  if (!spec || typeof spec !== 'object') throw invalidRequest(`Missing required parameter: '${at}'.`, at);
  if (spec.mode !== 'auto' && spec.mode !== 'required')
    throw invalidRequest(`Invalid value for '${at}.mode': expected 'auto' or 'required'.`, `${at}.mode`);
  if (!Array.isArray(spec.tools) || spec.tools.length === 0)
    throw invalidRequest(`Invalid value for '${at}.tools': expected a non-empty array of tools.`, `${at}.tools`);
  const allowed = (spec.tools as unknown[]).map((entry, i) => {
    const tool = entry as { type?: unknown; function?: { name?: unknown } } | null;
    const name = tool?.type === 'function' ? tool.function?.name : undefined;
    if (typeof name !== 'string')
      throw invalidRequest(
        `Invalid value for '${at}.tools[${i}]': expected {"type": "function", "function": {"name": …}}.`,
        `${at}.tools[${i}]`,
      );
    return name;
  });
  return { allowed, mode: spec.mode };
}
