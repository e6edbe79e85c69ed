import type { Image, ImageLimits } from './images.js';

/** What a backend sends: the system prompt (every invocation), the text for stdin, and images. */
export interface Prompt {
  system: string | null;
  text: string;
  /** Images (and documents) of the turns being sent, in order. */
  images?: Image[];
}

/** How one backend needs a conversation normalised (chosen per backend in policy.ts). */
export interface TranscriptPolicy {
  /** Characters a tool call id may contain; others become `_`. */
  toolIdPattern: RegExp | null;
  /** Whether the CLI can take images at all. */
  images: boolean;
  /** Whether it takes documents (PDFs), carried as images are; absent, it does not. */
  documents?: boolean;
  /** The CLI's name, for the 400 that refuses what it cannot take. */
  name?: string;
  limits: ImageLimits;
}

/** One conversation turn after normalisation: what fingerprints and rendering both work on. */
export interface Turn {
  role: 'user' | 'assistant' | 'tool';
  text: string;
  /** The `name` a user message carried. */
  name?: string;
  images?: Image[];
  /**
   * What the turn is matched by when it differs from its text: an assistant turn's calls by id,
   * not by their arguments (a client may send a call back re-serialised, defaults filled in).
   */
  key?: string;
}

export interface Transcript {
  system: string | null;
  turns: Turn[];
  /** Earliest turns left out to fit the context (said so in the rendered prompt). */
  omitted?: number;
}
