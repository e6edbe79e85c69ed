import { invalidRequest, unsupportedValue } from '../errors/index.js';
import type { ResponsesRequest } from './responses-schema.js';

/**
 * The request's function tools in the chat shape `parseToolRequest` reads: Responses tools are
 * flat (`{type, name, description, parameters}`), its named tool_choice `{type, name}`.
 */
export function toChatTools(body: ResponsesRequest): {
  tools?: unknown;
  tool_choice?: unknown;
  parallel_tool_calls?: unknown;
} {
  const tools = body.tools?.map((t, i) => {
    const tool = t as { type?: unknown; name?: unknown; description?: unknown; parameters?: unknown };
    if (tool?.type !== 'function')
      throw unsupportedValue(
        `tools.${i}.type`,
        `Invalid value for 'tools.${i}.type': olp serves function tools only (got '${String(tool?.type).slice(0, 40)}').`,
      );
    return {
      type: 'function',
      function: {
        name: tool.name,
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        ...(tool.parameters !== undefined ? { parameters: tool.parameters } : {}),
      },
    };
  });
  const toolChoice = toChatToolChoice(body.tool_choice);
  return {
    ...(tools ? { tools } : {}),
    ...(toolChoice !== undefined ? { tool_choice: toolChoice } : {}),
    ...(body.parallel_tool_calls != null ? { parallel_tool_calls: body.parallel_tool_calls } : {}),
  };
}

const CHOICES = `'none', 'auto', 'required', {"type": "function", "name": …} or {"type": "allowed_tools", "mode": "auto" | "required", "tools": [{"type": "function", "name": …}, …]}`;

/**
 * A Responses `tool_choice` in the chat shape the tools module reads, checked in the Responses
 * shape (so a 400 quotes what this endpoint takes): a named function is `{type, name}`, allowed
 * tools `{type: "allowed_tools", mode, tools: [{type: "function", name}]}`.
 */
function toChatToolChoice(raw: unknown): unknown {
  if (raw === undefined || raw === null || raw === 'none' || raw === 'auto' || raw === 'required') return raw;
  const choice = raw as { type?: unknown; name?: unknown; mode?: unknown; tools?: unknown };
  if (choice && typeof choice === 'object' && choice.type === 'function' && typeof choice.name === 'string')
    return { type: 'function', function: { name: choice.name } };
  if (choice && typeof choice === 'object' && choice.type === 'allowed_tools') {
    if (choice.mode !== 'auto' && choice.mode !== 'required')
      throw invalidRequest("Invalid value for 'tool_choice.mode': expected 'auto' or 'required'.", 'tool_choice.mode');
    if (!Array.isArray(choice.tools) || choice.tools.length === 0)
      throw invalidRequest(
        "Invalid value for 'tool_choice.tools': expected a non-empty array of tools.",
        'tool_choice.tools',
      );
    const tools = (choice.tools as unknown[]).map((entry, i) => {
      const tool = entry as { type?: unknown; name?: unknown } | null;
      if (tool?.type !== 'function')
        throw unsupportedValue(
          `tool_choice.tools.${i}.type`,
          `Invalid value for 'tool_choice.tools.${i}.type': olp serves function tools only (got '${String(tool?.type).slice(0, 40)}').`,
        );
      if (typeof tool.name !== 'string')
        throw invalidRequest(
          `Missing required parameter: 'tool_choice.tools.${i}.name'.`,
          `tool_choice.tools.${i}.name`,
        );
      return { type: 'function', function: { name: tool.name } };
    });
    return { type: 'allowed_tools', allowed_tools: { mode: choice.mode, tools } };
  }
  throw invalidRequest(`Invalid value for 'tool_choice': expected ${CHOICES}.`, 'tool_choice');
}
