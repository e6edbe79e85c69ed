// The client's functions as olp's core sees them.

/** A function the client offers the model (OpenAI `tools[].function`, or a legacy `functions[]` entry). */
export interface ToolSpec {
  name: string;
  description?: string;
  /** JSON Schema of the arguments (an object schema). */
  parameters: Record<string, unknown>;
}

/** What the model may do with the tools: `auto`, `none`, `required`, or one named function. */
export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

/** The request's tools, as the conversation core sees them. */
export interface ToolRequest {
  tools: ToolSpec[];
  choice: ToolChoice;
  /** The client accepts several calls in one step (`parallel_tool_calls`, default true). */
  parallel: boolean;
}
