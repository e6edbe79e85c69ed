import { z } from 'zod';
import { invalidRequest } from '../../errors/index.js';
import type { ToolSpec } from '../../tools/index.js';
import { firstIssue } from '../../errors/index.js';
import type { InputItem } from './schema.js';

// The OpenAI Agents SDK's `shell` and `apply_patch` tools, which the client runs on its own machine:
// the functions the model is offered for them, their calls' arguments (one rendering for a call the
// model made and the same call echoed back or replayed), and their results as text the model reads.

/** The function a `shell` tool is offered as. */
export const SHELL_FUNCTION: ToolSpec = {
  name: 'shell',
  description:
    "Runs shell commands on the user's machine, in order, and returns each one's stdout, stderr and exit code.",
  parameters: {
    type: 'object',
    properties: {
      commands: { type: 'array', items: { type: 'string' }, description: 'The commands to run, in order.' },
      timeout_ms: { type: 'integer', description: 'How long the commands may run, in milliseconds.' },
    },
    required: ['commands'],
    additionalProperties: false,
  },
};

/** The function an `apply_patch` tool is offered as. */
export const APPLY_PATCH_FUNCTION: ToolSpec = {
  name: 'apply_patch',
  description:
    "Creates, updates or deletes one file on the user's machine. For create_file and update_file, `diff` is a " +
    "V4A diff: hunks opened by `@@` (with a line of context after it for an update), lines prefixed with ' ' " +
    "(context), '-' (removed) or '+' (added); a new file's diff is all '+' lines.",
  parameters: {
    type: 'object',
    properties: {
      type: { type: 'string', enum: ['create_file', 'update_file', 'delete_file'] },
      path: { type: 'string', description: 'The file, relative to the working directory.' },
      diff: { type: 'string', description: 'The V4A diff (not for delete_file).' },
    },
    required: ['type', 'path'],
    additionalProperties: false,
  },
};

/** Whether a `shell` tool runs on the client's machine: a hosted container shell runs at OpenAI. */
export function isLocalShell(tool: { environment?: unknown }): boolean {
  const env = tool.environment as { type?: unknown } | null | undefined;
  return env === undefined || env === null || env?.type === 'local';
}

/** A shell call's arguments as the model gives them: its commands, then its timeout when it set one. */
export function shellArguments(action: { commands?: unknown; timeout_ms?: unknown } | null | undefined): string {
  const commands = Array.isArray(action?.commands) ? action.commands : [];
  const timeout = typeof action?.timeout_ms === 'number' ? { timeout_ms: action.timeout_ms } : {};
  return JSON.stringify({ commands, ...timeout });
}

/** A patch call's arguments as the model gives them: type, path, then the diff when there is one. */
export function patchArguments(op: { type?: unknown; path?: unknown; diff?: unknown } | null | undefined): string {
  return JSON.stringify({
    type: op?.type,
    path: op?.path,
    ...(typeof op?.diff === 'string' && op.type !== 'delete_file' ? { diff: op.diff } : {}),
  });
}

const shellCall = z
  .object({
    type: z.literal('shell_call'),
    call_id: z.string().min(1),
    action: z.object({ commands: z.array(z.string()), timeout_ms: z.number().int().nullable().optional() }).loose(),
  })
  .loose();
const outcome = z.discriminatedUnion('type', [
  z.object({ type: z.literal('exit'), exit_code: z.number().int() }),
  z.object({ type: z.literal('timeout') }),
]);
const shellCallOutput = z
  .object({
    type: z.literal('shell_call_output'),
    call_id: z.string().min(1),
    output: z.array(z.object({ stdout: z.string(), stderr: z.string(), outcome }).loose()),
  })
  .loose();
const operation = z.discriminatedUnion('type', [
  z.object({ type: z.enum(['create_file', 'update_file']), path: z.string(), diff: z.string() }).loose(),
  z.object({ type: z.literal('delete_file'), path: z.string() }).loose(),
]);
const applyPatchCall = z.object({ type: z.literal('apply_patch_call'), call_id: z.string().min(1), operation }).loose();
const applyPatchCallOutput = z
  .object({
    type: z.literal('apply_patch_call_output'),
    call_id: z.string().min(1),
    status: z.enum(['completed', 'failed']),
    output: z.string().nullable().optional(),
  })
  .loose();

/** The input item types of these tools. */
export const SDK_TOOL_ITEMS: ReadonlySet<string> = new Set([
  'shell_call',
  'shell_call_output',
  'apply_patch_call',
  'apply_patch_call_output',
]);

/** A shell call's results, one a command, as text: each command's exit code, stdout and stderr. */
function shellText(output: z.infer<typeof shellCallOutput>['output']): string {
  if (output.length === 0) return 'No command ran.';
  return output
    .map((o, i) => {
      const ended = o.outcome.type === 'exit' ? `exited with code ${o.outcome.exit_code}` : 'timed out';
      const streams = [o.stdout && `stdout:\n${o.stdout}`, o.stderr && `stderr:\n${o.stderr}`].filter(Boolean);
      return [`Command ${i + 1} ${ended}.`, ...(streams.length ? streams : ['(no output)'])].join('\n');
    })
    .join('\n\n');
}

/**
 * One of these input items as stored, and as the conversation takes it: a call the model made
 * (under the function's name, with the arguments the model gave) or the client's result as text.
 */
export function parseSdkToolItem(
  entry: unknown,
  at: string,
): {
  item: Exclude<InputItem, { type: 'message' }>;
  call?: { id: string; name: string; args: string };
  result?: string;
} {
  const type = (entry as { type?: unknown }).type;
  const schema =
    type === 'shell_call'
      ? shellCall
      : type === 'shell_call_output'
        ? shellCallOutput
        : type === 'apply_patch_call'
          ? applyPatchCall
          : applyPatchCallOutput;
  const r = schema.safeParse(entry, { reportInput: true });
  if (!r.success) throw invalidRequest(...firstIssue(r.error, at));
  const d = r.data;
  switch (d.type) {
    case 'shell_call': {
      const action = { commands: d.action.commands, timeout_ms: d.action.timeout_ms ?? null, max_output_length: null };
      return {
        item: { type: 'shell_call', call_id: d.call_id, action },
        call: { id: d.call_id, name: 'shell', args: shellArguments(action) },
      };
    }
    case 'shell_call_output': {
      const output = d.output.map(({ stdout, stderr, outcome: o }) => ({ stdout, stderr, outcome: o }));
      return { item: { type: 'shell_call_output', call_id: d.call_id, output }, result: shellText(output) };
    }
    case 'apply_patch_call': {
      const op = d.operation;
      const kept =
        op.type === 'delete_file' ? { type: op.type, path: op.path } : { type: op.type, path: op.path, diff: op.diff };
      return {
        item: { type: 'apply_patch_call', call_id: d.call_id, operation: kept },
        call: { id: d.call_id, name: 'apply_patch', args: patchArguments(kept) },
      };
    }
    default: {
      const output = d.output ?? '';
      return {
        item: { type: 'apply_patch_call_output', call_id: d.call_id, status: d.status, output },
        result:
          d.status === 'completed'
            ? output || 'The patch was applied.'
            : `The patch failed${output ? `: ${output}` : '.'}`,
      };
    }
  }
}
