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

/** A function as a wire format offers it, in olp's terms but not yet checked. */
export interface OfferedFunction {
  /** Where the function sits in the request, for errors (`tools[0].function`, `tools.0`). */
  at: string;
  name: unknown;
  description?: unknown;
  parameters?: unknown;
  /** The wire format's name for the arguments' schema (`parameters`, `input_schema`). */
  schemaField?: string;
}

/** What the model may do with the offered functions, before the names are checked against them. */
export type OfferedChoice = ToolChoice | { allowed: string[]; mode: 'auto' | 'required' };

/** A request's tools, mapped out of its wire format; `toolRequest` checks them the same for every format. */
export interface ToolOffer {
  /** The request's list of tools (`tools`, `functions`); undefined when it has none. */
  functions: OfferedFunction[] | undefined;
  /** The param naming the list, for errors. */
  listAt: string;
  choice: OfferedChoice;
  /** The param naming the choice (`tool_choice`, `function_call`), for errors. */
  choiceAt: string;
  parallel: boolean;
}
