// The conversation as olp's core holds it, in no wire format's words: each wire adapter (chat,
// Messages, Responses) maps its request into these messages, and the transcript renders them.
//
// A tool result is a part of a user message, not a role of its own: the results are what the
// client says back to the model's calls, and Anthropic's Messages (which Claude Code speaks) sends
// them in the user's message next to its other content, as blocks. Chat's `tool` messages and
// Responses' output items become user messages of one result each. The transcript renders a user
// message's results first (each its own tool turn), then its other parts as the user's turn.

/** Who says a message. */
export type Role = 'system' | 'user' | 'assistant';

/** One message of a conversation: its speaker, its parts in order, and the name a user gave. */
export interface Message {
  role: Role;
  parts: Part[];
  /** The speaker's name (chat's `name` on a user message), kept in the transcript (`<user name="bob">`). */
  name?: string;
}

/** What a message carries. The parts a 400 can be about (images, documents) say where the client sent them. */
export type Part = TextPart | ImagePart | DocumentPart | ToolCallPart | ToolResultPart | ReasoningPart | OtherPart;

export interface TextPart {
  type: 'text';
  text: string;
}

/** An image: a data URL, or an http(s) URL fetched (or refused) before it is sent. */
export interface ImagePart {
  type: 'image';
  url: string;
  /** Where the client sent it (`messages.3.content.1`): what a 400 about it names. */
  at: string;
}

/** A document: a data URL of a PDF (its bytes are checked when it is sent). */
export interface DocumentPart {
  type: 'document';
  url: string;
  /** Where the client sent it: what a 400 about it names. */
  at: string;
}

/** A call the model made of one of the client's functions. */
export interface ToolCallPart {
  type: 'tool_call';
  /** The call's id; '' for a call answered by its function's name (chat's legacy `function_call`). */
  id: string;
  name: string;
  /** The arguments as the model wrote them (JSON text, as a rule). */
  arguments: string;
}

/** The client's answer to one call. */
export interface ToolResultPart {
  type: 'tool_result';
  /** The id of the call it answers. */
  callId: string;
  content: string;
  /** The tool failed: the model reads `Error: ` before the content. */
  isError?: boolean;
  /** Set on a result that answers its call by the function's name, not an id (chat's legacy `function` message). */
  name?: string;
}

/** The model's thinking, as it came back with its reply; never sent to a CLI. */
export interface ReasoningPart {
  type: 'reasoning';
  text: string;
  signature?: string;
}

/** A part of a kind no CLI takes (chat's `input_audio`, a `file` without data): refused, naming it, when sent. */
export interface OtherPart {
  type: 'other';
  /** The kind as the client named it. */
  kind: string;
  /** Where the client sent it: what the 400 names. */
  at: string;
}

/** A tool result's text as the model reads it. */
export function toolResultText(part: ToolResultPart): string {
  return part.isError ? `Error: ${part.content}` : part.content;
}

/** The text parts of a message, in order. */
export function textsOf(message: Message): string[] {
  return message.parts.flatMap((p) => (p.type === 'text' ? [p.text] : []));
}
