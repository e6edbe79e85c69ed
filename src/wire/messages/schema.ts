import { z } from 'zod';
import { outputTokens } from '../output-tokens.js';

// The Anthropic Messages request's zod schemas. Unknown top-level keys are stripped, not rejected:
// Claude Code adds new ones often (context_management, output_config, …), and refusing them would
// break a client that works against Anthropic. Blocks are loose for the same reason (`citations`).

/** Prompt-caching marks: accepted on every block and tool, and ignored (the CLI caches on its own). */
const cacheControl = z.object({ type: z.string() }).loose().nullable().optional();

const text = z.object({ type: z.literal('text'), text: z.string(), cache_control: cacheControl }).loose();

/** The image types Anthropic takes (the core checks the bytes again). */
const MEDIA = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] as const;

const imageSource = z.discriminatedUnion(
  'type',
  [
    z.object({ type: z.literal('base64'), media_type: z.enum(MEDIA), data: z.string().min(1) }),
    z.object({ type: z.literal('url'), url: z.string().min(1) }),
    z.object({ type: z.literal('file'), file_id: z.string() }),
  ],
  { error: "expected an image source of type 'base64', 'url' or 'file'" },
);
const image = z.object({ type: z.literal('image'), source: imageSource, cache_control: cacheControl }).loose();

const toolUse = z
  .object({
    type: z.literal('tool_use'),
    id: z.string().min(1),
    name: z.string().min(1),
    input: z.record(z.string(), z.unknown()),
    cache_control: cacheControl,
  })
  .loose();

/**
 * Claude Code 2.1.332's ToolSearch answers with the tools it loaded as `tool_reference` blocks (the
 * API then offers their deferred definitions); olp offers every tool on every request, so the
 * block is only words for the model.
 */
const toolReference = z.object({ type: z.literal('tool_reference'), tool_name: z.string() }).loose();

const resultPart = z.discriminatedUnion('type', [text, image, toolReference], {
  error: "expected a tool result content block of type 'text', 'image' or 'tool_reference'",
});
const toolResult = z
  .object({
    type: z.literal('tool_result'),
    tool_use_id: z.string().min(1),
    content: z.union([z.string(), z.array(resultPart)]).optional(),
    is_error: z.boolean().optional(),
    cache_control: cacheControl,
  })
  .loose();

/** A document: its `source` is read in messages-request.ts (plain text as text, a base64 PDF as a document). */
const document = z.object({ type: z.literal('document'), source: z.object({ type: z.string() }).loose() }).loose();

/**
 * Blocks no CLI is sent: thinking (kept as the core's reasoning, never rendered), and server
 * tools' calls and results.
 */
export const DROPPED_BLOCKS = [
  'thinking',
  'redacted_thinking',
  'server_tool_use',
  'web_search_tool_result',
  'web_fetch_tool_result',
  'code_execution_tool_result',
  'bash_code_execution_tool_result',
  'text_editor_code_execution_tool_result',
  'mcp_tool_use',
  'mcp_tool_result',
  'container_upload',
] as const;
const dropped = z.object({ type: z.enum(DROPPED_BLOCKS) }).loose();

const BLOCK_TYPES = ['text', 'image', 'tool_use', 'tool_result', 'document', ...DROPPED_BLOCKS];

const block = z.discriminatedUnion('type', [text, image, toolUse, toolResult, document, dropped], {
  error: `expected a content block of type ${BLOCK_TYPES.map((t) => `'${t}'`).join(', ')}`,
});
export type Block = z.infer<typeof block>;

const message = z
  .object({
    role: z.enum(['user', 'assistant', 'system'], { error: "expected 'role' to be 'user' or 'assistant'" }),
    content: z.union([z.string(), z.array(block)], { error: 'expected a string or an array of content blocks' }),
  })
  .loose();
export type AnthropicMessage = z.infer<typeof message>;

const toolChoice = z.discriminatedUnion(
  'type',
  [
    z.object({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }),
    z.object({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }),
    z.object({ type: z.literal('tool'), name: z.string().min(1), disable_parallel_tool_use: z.boolean().optional() }),
    z.object({ type: z.literal('none') }),
  ],
  { error: "expected a tool_choice of type 'auto', 'any', 'tool' or 'none'" },
);

export const messagesRequestSchema = z.object({
  model: z.string({ error: 'you must provide a model parameter (a string)' }).min(1, 'model must not be empty'),
  max_tokens: outputTokens(),
  messages: z.array(message, { error: "expected 'messages' to be an array of message objects" }),
  system: z.union([z.string(), z.array(text)], { error: "expected a string or an array of 'text' blocks" }).optional(),
  stream: z.boolean().optional(),
  // Validated as Anthropic does, then ignored: the CLIs choose their own sampling.
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().min(0).optional(),
  stop_sequences: z.array(z.string()).optional(),
  metadata: z.object({ user_id: z.string().nullable().optional() }).loose().optional(),
  thinking: z
    .object({
      type: z.enum(['enabled', 'disabled', 'adaptive']),
      budget_tokens: z.number().int().min(1).optional(),
      display: z.string().optional(),
    })
    .loose()
    .optional(),
  // How much the model thinks (Claude Code sends `effort`; `format` is structured output's newer place).
  output_config: z
    .object({ effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']).optional() })
    .loose()
    .nullable()
    .optional(),
  service_tier: z.string().optional(),
  container: z
    .union([z.string(), z.object({}).loose()])
    .nullable()
    .optional(),
  mcp_servers: z.array(z.object({}).loose()).optional(),
  tools: z.array(z.object({ type: z.string().optional(), name: z.string() }).loose()).optional(),
  tool_choice: toolChoice.optional(),
  // Structured outputs (Anthropic's beta): a JSON schema the reply must follow.
  output_format: z
    .object({ type: z.literal('json_schema'), schema: z.record(z.string(), z.unknown()) })
    .nullable()
    .optional(),
});
export type MessagesRequest = z.infer<typeof messagesRequestSchema>;
