import { z } from 'zod';
import { outputTokens } from '../output-tokens.js';

// The Responses request's zod schemas and the input item shapes olp stores.
// Unknown top-level keys are stripped, not rejected (SDKs add their own); docs/clients.md lists what is used.

const inputText = z.object({ type: z.literal('input_text'), text: z.string() });
const inputImage = z.object({
  type: z.literal('input_image'),
  image_url: z.string().min(1, 'expected a data URL (file_id images are not supported)').optional(),
  file_id: z.string().optional(),
  detail: z.enum(['auto', 'low', 'high', 'original']).optional(),
});
const inputFile = z.object({ type: z.literal('input_file') }).loose();
const outputText = z.object({ type: z.literal('output_text'), text: z.string() }).loose();
const refusal = z.object({ type: z.literal('refusal'), refusal: z.string() });

const inputPart = z.discriminatedUnion('type', [inputText, inputImage, inputFile], {
  error: "expected a content part of type 'input_text', 'input_image' or 'input_file'",
});
const assistantPart = z.discriminatedUnion('type', [outputText, refusal, inputText], {
  error: "expected a content part of type 'output_text' or 'refusal'",
});

/** An input message item (`role` and content parts). */
export const message = z.discriminatedUnion(
  'role',
  [
    z.object({
      type: z.literal('message').optional(),
      role: z.enum(['user']),
      content: z.union([z.string(), z.array(inputPart)], { error: 'expected a string or an array of content parts' }),
    }),
    z.object({
      type: z.literal('message').optional(),
      role: z.enum(['system', 'developer']),
      content: z.union([z.string(), z.array(inputText)], {
        error: "expected a string or an array of 'input_text' parts",
      }),
    }),
    z.object({
      type: z.literal('message').optional(),
      role: z.literal('assistant'),
      id: z.string().optional(),
      status: z.string().optional(),
      content: z.union([z.string(), z.array(assistantPart)], {
        error: 'expected a string or an array of content parts',
      }),
    }),
  ],
  { error: "expected an input item of type 'message' with a role of user, system, developer or assistant" },
);

const textFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({
    type: z.literal('json_schema'),
    name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'expected 1-64 letters, digits, _ or -'),
    schema: z.record(z.string(), z.unknown()),
    description: z.string().optional(),
    strict: z.boolean().nullable().optional(),
  }),
]);

/** A `POST /v1/responses` body, as far as olp reads it. */
export const responsesRequestSchema = z.object({
  model: z.string({ error: 'you must provide a model parameter (a string)' }).min(1, 'model must not be empty'),
  input: z.union(
    [
      z.string().min(1, 'input must not be empty'),
      z.array(z.unknown()).min(1, "'input' must contain at least one item"),
    ],
    { error: 'expected a string or an array of input items' },
  ),
  instructions: z.string().nullable().optional(),
  stream: z.boolean().nullable().optional(),
  previous_response_id: z.string().min(1).nullable().optional(),
  store: z.boolean().nullable().optional(),
  max_output_tokens: outputTokens(16).nullable().optional(),
  text: z
    .object({ format: textFormat.optional(), verbosity: z.enum(['low', 'medium', 'high']).nullable().optional() })
    .nullable()
    .optional(),
  metadata: z.record(z.string().max(64), z.string().max(512)).nullable().optional(),
  user: z.string().optional(),
  reasoning: z
    .object({
      effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']).nullable().optional(),
      summary: z.enum(['auto', 'concise', 'detailed', 'none']).nullable().optional(),
      // The older name of `summary` (the SDK still types it).
      generate_summary: z.enum(['auto', 'concise', 'detailed', 'none']).nullable().optional(),
    })
    .loose()
    .nullable()
    .optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().min(0).max(1).nullable().optional(),
  truncation: z.enum(['auto', 'disabled']).nullable().optional(),
  parallel_tool_calls: z.boolean().nullable().optional(),
  tools: z.array(z.unknown()).optional(),
  tool_choice: z.unknown().optional(),
});

export type ResponsesRequest = z.infer<typeof responsesRequestSchema>;
/** A validated input message item. */
export type Message = z.infer<typeof message>;

/** One input item as stored and listed by `input_items`: OpenAI's shapes. */
export type InputItem =
  | {
      type: 'message';
      role: 'user' | 'system' | 'developer' | 'assistant';
      content: (
        | { type: 'input_text'; text: string }
        | { type: 'input_image'; image_url: string; detail: string }
        | { type: 'output_text'; text: string; annotations: [] }
      )[];
    }
  | { type: 'function_call'; call_id: string; name: string; arguments: string; namespace?: string }
  | { type: 'function_call_output'; call_id: string; output: string }
  | { type: 'custom_tool_call'; call_id: string; name: string; input: string; namespace?: string }
  | { type: 'custom_tool_call_output'; call_id: string; output: string }
  | {
      type: 'shell_call';
      call_id: string;
      action: { commands: string[]; timeout_ms: number | null; max_output_length: null };
    }
  | {
      type: 'shell_call_output';
      call_id: string;
      output: { stdout: string; stderr: string; outcome: { type: 'exit'; exit_code: number } | { type: 'timeout' } }[];
    }
  | {
      type: 'apply_patch_call';
      call_id: string;
      operation: { type: 'create_file' | 'update_file' | 'delete_file'; path: string; diff?: string };
    }
  | { type: 'apply_patch_call_output'; call_id: string; status: 'completed' | 'failed'; output: string };

/** A function call the model made, sent back as an input item. */
export const functionCall = z
  .object({
    type: z.literal('function_call'),
    call_id: z.string().min(1),
    name: z.string().min(1),
    arguments: z.string(),
    namespace: z.string().min(1).optional(),
    id: z.string().optional(),
    status: z.string().optional(),
  })
  .loose();
/** A freeform (custom) tool call the model made, sent back as an input item. */
export const customToolCall = z
  .object({
    type: z.literal('custom_tool_call'),
    call_id: z.string().min(1),
    name: z.string().min(1),
    input: z.string(),
    namespace: z.string().min(1).optional(),
    id: z.string().optional(),
  })
  .loose();
/** The client's result of a function call. */
export const functionCallOutput = z.object({
  type: z.enum(['function_call_output', 'custom_tool_call_output']),
  call_id: z.string().min(1),
  output: z.union([z.string(), z.array(z.object({ type: z.string(), text: z.string().optional() }).loose())], {
    error: 'expected a string or an array of content parts',
  }),
  id: z.string().optional(),
  status: z.string().optional(),
});
