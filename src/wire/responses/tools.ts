import { createHash } from 'node:crypto';
import { invalidRequest, unsupportedValue } from '../../errors/index.js';
import { type OfferedChoice, type OfferedFunction, TOOL_NAME, type ToolOffer } from '../../tools/index.js';
import type { ResponsesRequest } from './schema.js';
import { APPLY_PATCH_FUNCTION, isLocalShell, SHELL_FUNCTION } from './sdk-tools.js';

/**
 * How a tool the model is offered under one name goes back to a Responses client: a freeform
 * `custom` tool (its call a `custom_tool_call` with the string `input`), or a function of a
 * `namespace` (a `function_call` naming both), or the Agents SDK's `shell` and `apply_patch` tools
 * (a `shell_call` or `apply_patch_call`). Plain functions need no entry.
 */
export type ToolWire =
  | { type: 'custom'; name: string; namespace?: string }
  | { type: 'function'; name: string; namespace: string }
  | { type: 'shell' | 'apply_patch'; name: string; namespace?: undefined };

/** The request's tools as olp offers them, how each goes back to the client, and the types not offered. */
export interface ResponsesTools {
  offer: ToolOffer;
  /** By the name the model is offered. */
  wire: ReadonlyMap<string, ToolWire>;
  /** Tool types olp cannot run for the client, left out of what the model is offered (in order, once each). */
  dropped: string[];
}

/**
 * The name a namespace's function (or custom tool) is offered under: `<namespace>__<name>`, or, when
 * that is no valid tool name, a shortened one made unique by a hash of both.
 */
export function qualifiedName(namespace: string, name: string): string {
  const joined = `${namespace}__${name}`;
  if (TOOL_NAME.test(joined)) return joined;
  const hash = createHash('sha256').update(`${namespace}\u0000${name}`).digest('hex').slice(0, 8);
  return `${`${namespace}__${name}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 55)}_${hash}`;
}

/**
 * A custom tool's `format`, as OpenAI takes it: `{type: 'text'}` or `{type: 'grammar', syntax:
 * 'lark' | 'regex', definition: <the grammar>}`; anything else is a 400 naming the field.
 */
function checkFormat(format: unknown, at: string): void {
  if (format === undefined) return;
  const f = format as { type?: unknown; syntax?: unknown; definition?: unknown } | null;
  if (!f || typeof f !== 'object' || Array.isArray(f))
    throw invalidRequest(`Invalid type for '${at}': expected an object.`, at);
  if (f.type === 'text') return;
  if (f.type !== 'grammar')
    throw invalidRequest(`Invalid value for '${at}.type': expected 'text' or 'grammar'.`, `${at}.type`);
  if (f.syntax !== 'lark' && f.syntax !== 'regex')
    throw invalidRequest(`Invalid value for '${at}.syntax': expected 'lark' or 'regex'.`, `${at}.syntax`);
  if (typeof f.definition !== 'string')
    throw invalidRequest(
      f.definition === undefined
        ? `Missing required parameter: '${at}.definition'.`
        : `Invalid type for '${at}.definition': expected a string (the grammar).`,
      `${at}.definition`,
    );
}

/** What a custom tool's one string must look like, in words the model reads. */
function formatText(format: unknown): string {
  const f = format as { type?: unknown; syntax?: unknown; definition?: unknown } | null | undefined;
  if (f?.type === 'grammar' && typeof f.definition === 'string')
    return `The input must follow this ${typeof f.syntax === 'string' ? f.syntax : ''} grammar:\n${f.definition}`;
  return 'The input is free text.';
}

type RawTool = {
  type?: unknown;
  name?: unknown;
  description?: unknown;
  parameters?: unknown;
  format?: unknown;
  tools?: unknown;
  environment?: unknown;
};

/** One function or custom tool as a function olp offers, and its wire entry (under `namespace`, if any). */
function offerFunction(
  tool: RawTool,
  at: string,
  namespace: string | undefined,
  wire: Map<string, ToolWire>,
): OfferedFunction {
  if (typeof tool.name !== 'string' || !TOOL_NAME.test(tool.name))
    throw invalidRequest(
      `Invalid '${at}.name': expected 1 to 64 letters, digits, underscores or dashes.`,
      `${at}.name`,
    );
  const name = namespace ? qualifiedName(namespace, tool.name) : tool.name;
  if (tool.type === 'custom') {
    checkFormat(tool.format, `${at}.format`);
    wire.set(name, { type: 'custom', name: tool.name, ...(namespace ? { namespace } : {}) });
    const about = typeof tool.description === 'string' ? `${tool.description}\n\n` : '';
    return {
      at,
      name,
      description: `${about}Call it with one string, \`input\`. ${formatText(tool.format)}`,
      parameters: {
        type: 'object',
        properties: { input: { type: 'string', description: 'The whole input, as one string.' } },
        required: ['input'],
        additionalProperties: false,
      },
    };
  }
  if (namespace) wire.set(name, { type: 'function', name: tool.name, namespace });
  return { at, name, description: tool.description, parameters: tool.parameters };
}

/**
 * The request's tools as olp offers them (for the core's `toolRequest`). Responses tools are flat
 * (`{type, name, description, parameters}`); a `namespace`'s functions are offered under qualified
 * names, a `custom` (freeform) tool as a function of one string `input`, the Agents SDK's `shell`
 * (local) and `apply_patch` as functions of their actions. Tool types olp cannot run for the client
 * (hosted search, code interpreter, image generation, remote MCP, computer use, a hosted container
 * shell, a client-side tool search) are left out and named in `dropped`: the model is not offered them.
 */
export function toToolOffer(body: ResponsesRequest): ResponsesTools {
  const wire = new Map<string, ToolWire>();
  const dropped: string[] = [];
  const tools: OfferedFunction[] = [];
  (body.tools ?? []).forEach((t, i) => {
    const tool = t as RawTool | null;
    const at = `tools.${i}`;
    if (!tool || typeof tool !== 'object') throw invalidRequest(`Invalid type for '${at}': expected an object.`, at);
    if (tool.type === 'function' || tool.type === 'custom') tools.push(offerFunction(tool, at, undefined, wire));
    else if (tool.type === 'apply_patch' || (tool.type === 'shell' && isLocalShell(tool))) {
      // The client runs these itself: the model is offered a function, its calls go back as the tool's own items.
      const fn = tool.type === 'shell' ? SHELL_FUNCTION : APPLY_PATCH_FUNCTION;
      tools.push({ at, ...fn });
      wire.set(fn.name, { type: tool.type, name: fn.name });
    } else if (tool.type === 'namespace') {
      if (typeof tool.name !== 'string' || !tool.name)
        throw invalidRequest(`Missing required parameter: '${at}.name'.`, `${at}.name`);
      // A namespace's name is part of every call's name: OpenAI's rule for tool names.
      if (!TOOL_NAME.test(tool.name))
        throw invalidRequest(
          `Invalid '${at}.name': expected 1 to 64 letters, digits, underscores or dashes.`,
          `${at}.name`,
        );
      if (!Array.isArray(tool.tools))
        throw invalidRequest(`Invalid type for '${at}.tools': expected an array of tools.`, `${at}.tools`);
      (tool.tools as RawTool[]).forEach((inner, j) => {
        if (inner?.type === 'function' || inner?.type === 'custom')
          tools.push(offerFunction(inner, `${at}.tools.${j}`, tool.name as string, wire));
        // Namespaces hold functions and custom tools, one level deep (OpenAI refuses another inside).
        else if (inner?.type === 'namespace')
          throw invalidRequest(
            `Invalid value for '${at}.tools.${j}.type': a namespace holds function and custom tools, not ` +
              `another namespace.`,
            `${at}.tools.${j}.type`,
          );
        else if (!dropped.includes(String(inner?.type))) dropped.push(String(inner?.type).slice(0, 40));
      });
    } else if (typeof tool.type !== 'string')
      throw invalidRequest(`Missing required parameter: '${at}.type'.`, `${at}.type`);
    else if (!dropped.includes(tool.type)) dropped.push(tool.type.slice(0, 40));
  });
  const offer: ToolOffer = {
    functions: body.tools ? tools : undefined,
    listAt: 'tools',
    choice: toChoice(body.tool_choice),
    choiceAt: 'tool_choice',
    parallel: body.parallel_tool_calls !== false,
  };
  return { offer, wire, dropped };
}

const CHOICES =
  `'none', 'auto', 'required', {"type": "function" | "custom", "name": …}, {"type": "shell" | "apply_patch"} ` +
  `or {"type": "allowed_tools", "mode": "auto" | "required", "tools": [{"type": "function" | "custom", "name": …}, …]}`;

/** Tool types of OpenAI's that run on its side or on the client's machine by their own protocol. */
const HOSTED =
  /^(web_search.*|file_search|code_interpreter|image_generation|computer_use.*|mcp|tool_search|local_shell)$/;

/** The Agents SDK's tools a choice names by type alone: offered as functions of the same name. */
const BY_TYPE = /^(shell|apply_patch)$/;

/** The name a named tool of a choice is offered under (a namespace's: qualified; shell, apply_patch: their type). */
function chosenName(tool: { type?: unknown; name?: unknown; namespace?: unknown }): string | undefined {
  if (typeof tool.type === 'string' && BY_TYPE.test(tool.type)) return tool.type;
  if (typeof tool.name !== 'string') return undefined;
  return typeof tool.namespace === 'string' ? qualifiedName(tool.namespace, tool.name) : tool.name;
}

/**
 * A Responses `tool_choice` in olp's terms, checked in the Responses shape (so a 400 quotes
 * what this endpoint takes): a named function or custom tool is `{type,
 * name}`, allowed tools `{type: "allowed_tools", mode, tools: [{type, name}]}`. A hosted tool
 * olp does not offer cannot be forced.
 */
function toChoice(raw: unknown): OfferedChoice {
  if (raw === undefined || raw === null) return 'auto';
  if (raw === 'none' || raw === 'auto' || raw === 'required') return raw;
  const choice = raw as { type?: unknown; name?: unknown; namespace?: unknown; mode?: unknown; tools?: unknown };
  const named = choice && typeof choice === 'object' ? chosenName(choice) : undefined;
  if ((choice?.type === 'function' || choice?.type === 'custom' || BY_TYPE.test(String(choice?.type))) && named)
    return { name: named };
  if (choice && typeof choice === 'object' && choice.type === 'allowed_tools') {
    if (choice.mode !== 'auto' && choice.mode !== 'required')
      throw invalidRequest("Invalid value for 'tool_choice.mode': expected 'auto' or 'required'.", 'tool_choice.mode');
    if (!Array.isArray(choice.tools) || choice.tools.length === 0)
      throw invalidRequest(
        "Invalid value for 'tool_choice.tools': expected a non-empty array of tools.",
        'tool_choice.tools',
      );
    const tools = (choice.tools as unknown[]).flatMap((entry, i) => {
      const tool = entry as { type?: unknown; name?: unknown; namespace?: unknown } | null;
      const offered = tool?.type === 'function' || tool?.type === 'custom' || BY_TYPE.test(String(tool?.type));
      if (!tool || !offered) return []; // hosted
      const name = chosenName(tool);
      if (!name)
        throw invalidRequest(
          `Missing required parameter: 'tool_choice.tools.${i}.name'.`,
          `tool_choice.tools.${i}.name`,
        );
      return [name];
    });
    if (tools.length === 0) return 'none';
    return { allowed: tools, mode: choice.mode };
  }
  if (choice && typeof choice === 'object' && typeof choice.type === 'string' && HOSTED.test(choice.type))
    throw unsupportedValue(
      'tool_choice',
      `Invalid value for 'tool_choice': olp cannot force the hosted tool '${choice.type.slice(0, 40)}' (it runs ` +
        `neither web search nor other hosted tools for the client); use 'auto' or name a function or custom tool.`,
    );
  throw invalidRequest(`Invalid value for 'tool_choice': expected ${CHOICES}.`, 'tool_choice');
}
