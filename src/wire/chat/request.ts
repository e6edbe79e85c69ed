import { z } from 'zod';
import { checkDepth } from '../depth.js';
import { outputTokens } from '../output-tokens.js';
import { firstIssue } from '../../errors/index.js';
import { invalidRequest, unsupportedValue } from '../../errors/index.js';

// Unknown top-level keys are stripped, not rejected: SDKs and frameworks add vendor fields,
// and refusing them would break clients that work against OpenAI. docs/clients.md's request-fields table lists what is used.

const textPart = z.object({ type: z.literal('text'), text: z.string() });
const imagePart = z.object({
  type: z.literal('image_url'),
  image_url: z.object({ url: z.string().min(1), detail: z.enum(['auto', 'low', 'high']).optional() }),
});
const refusalPart = z.object({ type: z.literal('refusal'), refusal: z.string() });
const otherPart = z.object({ type: z.enum(['input_audio', 'file']) }).loose();

const userPart = z.discriminatedUnion('type', [textPart, imagePart, otherPart], {
  error: "expected a content part of type 'text', 'image_url', 'input_audio' or 'file'",
});
const assistantPart = z.discriminatedUnion('type', [textPart, refusalPart], {
  error: "expected a content part of type 'text' or 'refusal'",
});
const textOnly = z.array(textPart, { error: "expected a string or an array of 'text' parts" });

const toolCall = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

const name = z.string().optional();

const systemMessage = z.object({ role: z.literal('system'), content: z.union([z.string(), textOnly]), name });
const developerMessage = z.object({ role: z.literal('developer'), content: z.union([z.string(), textOnly]), name });
const userMessage = z.object({
  role: z.literal('user'),
  content: z.union([z.string(), z.array(userPart)], { error: 'expected a string or an array of content parts' }),
  name,
});
const assistantMessage = z.object({
  role: z.literal('assistant'),
  content: z
    .union([z.string(), z.array(assistantPart), z.null()], {
      error: 'expected a string, an array of content parts or null',
    })
    .optional(),
  refusal: z.string().nullable().optional(),
  tool_calls: z.array(toolCall).optional(),
  function_call: z.object({ name: z.string(), arguments: z.string() }).nullable().optional(),
  name,
});
const toolMessage = z.object({
  role: z.literal('tool'),
  content: z.union([z.string(), textOnly]),
  tool_call_id: z.string(),
});
const functionMessage = z.object({ role: z.literal('function'), content: z.string().nullable(), name: z.string() });

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'] as const;

const message = z.discriminatedUnion(
  'role',
  [systemMessage, developerMessage, userMessage, assistantMessage, toolMessage, functionMessage],
  {
    error: (issue) =>
      issue.code === 'invalid_union' && (issue.input === null || typeof issue.input !== 'object')
        ? 'expected a message object'
        : `expected 'role' to be one of ${ROLES.join(', ')}`,
  },
);

const chatRequestSchema = z.object({
  model: z.string({ error: 'you must provide a model parameter (a string)' }).min(1, 'model must not be empty'),
  messages: z
    .array(message, { error: "expected 'messages' to be an array of message objects" })
    .min(1, "'messages' must contain at least one message"),
  stream: z.boolean().nullable().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullable().optional(),
  n: z.number().int().min(1).max(128).nullable().optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().min(0).max(1).nullable().optional(),
  presence_penalty: z.number().min(-2).max(2).nullable().optional(),
  frequency_penalty: z.number().min(-2).max(2).nullable().optional(),
  max_tokens: outputTokens().nullable().optional(),
  max_completion_tokens: outputTokens().nullable().optional(),
  stop: z
    .union([z.string(), z.array(z.string()).max(4)])
    .nullable()
    .optional(),
  seed: z.number().int().nullable().optional(),
  user: z.string().optional(),
  logprobs: z.boolean().nullable().optional(),
  top_logprobs: z.number().int().min(0).max(20).nullable().optional(),
  // As OpenAI: token ids (integers, as JSON object keys) to a bias in [-100, 100].
  logit_bias: z
    .record(z.string().regex(/^\d+$/), z.number().min(-100).max(100), {
      error: (issue) =>
        issue.code === 'invalid_key'
          ? 'keys must be token ids (integers)'
          : 'expected an object mapping token ids to numbers between -100 and 100',
    })
    .nullable()
    .optional(),
  tools: z.array(z.object({ type: z.string() }).loose()).optional(),
  tool_choice: z.union([z.enum(['none', 'auto', 'required']), z.object({ type: z.string() }).loose()]).optional(),
  parallel_tool_calls: z.boolean().optional(),
  response_format: z
    .discriminatedUnion('type', [
      z.object({ type: z.literal('text') }),
      z.object({ type: z.literal('json_object') }),
      z.object({
        type: z.literal('json_schema'),
        json_schema: z.object({
          name: z
            .string()
            .regex(/^[A-Za-z0-9_-]{1,64}$/, 'expected 1 to 64 letters, digits, underscores or dashes (as OpenAI)'),
          schema: z.record(z.string(), z.unknown()).optional(),
          strict: z.boolean().nullable().optional(),
          description: z.string().optional(),
        }),
      }),
    ])
    .optional(),
  reasoning_effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']).nullable().optional(),
  metadata: z.record(z.string(), z.string()).nullable().optional(),
  store: z.boolean().nullable().optional(),
});

export type ChatRequest = z.infer<typeof chatRequestSchema>;
export type ChatMessage = ChatRequest['messages'][number];

function contentIsEmpty(content: unknown): boolean {
  if (typeof content === 'string') return content.trim() === '';
  if (Array.isArray(content))
    return content.length === 0 || content.every((p) => p?.type === 'text' && String(p.text).trim() === '');
  return true;
}

/**
 * Every tool result must answer a call the conversation made: a `tool` message needs an earlier
 * assistant message with a tool call of its `tool_call_id`, a `function` message an earlier
 * function_call (or tool call) of its `name`. Matched against any earlier assistant message, not
 * only the one right before it (OpenAI's stricter rule): results that arrive late are still
 * dropped by transcript hygiene, but a result answering nothing at all is a 400, as at OpenAI.
 */
function checkToolResults(messages: readonly ChatMessage[]): void {
  const callIds = new Set<string>();
  const callNames = new Set<string>();
  messages.forEach((m, i) => {
    if (m.role === 'assistant') {
      for (const c of m.tool_calls ?? []) {
        callIds.add(c.id);
        callNames.add(c.function.name);
      }
      if (m.function_call) callNames.add(m.function_call.name);
    } else if (m.role === 'tool' && !callIds.has(m.tool_call_id)) {
      throw invalidRequest(
        `Invalid value for 'messages.${i}.tool_call_id': a 'tool' message must answer a tool call of an earlier ` +
          `assistant message, and no earlier message has a tool call with this id.`,
        `messages.${i}.tool_call_id`,
      );
    } else if (m.role === 'function' && !callNames.has(m.name)) {
      throw invalidRequest(
        `Invalid value for 'messages.${i}.name': a 'function' message must answer a function_call of an earlier ` +
          `assistant message, and none calls a function of this name.`,
        `messages.${i}.name`,
      );
    }
  });
}

/** Validates a chat completion body or throws a 400 ProxyError whose `param` names the offending field. */
export function parseChatRequest(body: unknown): ChatRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw invalidRequest('The request body must be a JSON object with `model` and `messages`.', null);
  }
  checkDepth(body);
  const r = chatRequestSchema.safeParse(body, { reportInput: true });
  if (!r.success) {
    const [message, param] = firstIssue(r.error);
    throw invalidRequest(message, param, 'invalid_request', r.error);
  }
  const req = r.data;
  req.messages.forEach((m, i) => {
    const needsContent = m.role === 'user' || m.role === 'system' || m.role === 'developer';
    if (needsContent && contentIsEmpty(m.content)) {
      throw invalidRequest(
        `Invalid value for 'messages.${i}.content': a ${m.role} message must have non-empty content.`,
        `messages.${i}.content`,
      );
    }
    if (
      m.role === 'assistant' &&
      contentIsEmpty(m.content ?? '') &&
      !m.tool_calls?.length &&
      !m.function_call &&
      !m.refusal
    ) {
      throw invalidRequest(
        `Invalid value for 'messages.${i}.content': an assistant message needs content or tool_calls.`,
        `messages.${i}.content`,
      );
    }
  });
  checkToolResults(req.messages);
  if (!req.messages.some((m) => m.role !== 'system' && m.role !== 'developer')) {
    throw invalidRequest(
      "'messages' must contain at least one user message, not only system or developer messages.",
      'messages',
    );
  }
  if (!req.messages.some((m) => m.role === 'user' || m.role === 'system' || m.role === 'developer')) {
    throw invalidRequest("'messages' must contain at least one user or system message.", 'messages');
  }
  if (req.n != null && req.n !== 1) {
    throw unsupportedValue('n', "Invalid value for 'n': olp returns one choice per request; use n=1 or leave it out.");
  }
  return req;
}
