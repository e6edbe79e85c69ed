import type { Policy } from '../store/index.js';

/** The part of a principal admission needs. */
export interface Admittee {
  keyId: string;
  name: string;
  policy: Policy;
}

/** Held while a request may run a CLI; released in the function that took it. */
export interface Permit {
  /** ms spent in the wait queue. */
  readonly waitedMs: number;
  /** `x-ratelimit-*` headers for the key, as of admission. */
  readonly headers: Record<string, string>;
  release(): void;
  /**
   * Replaces the tokens held against the key's budget (at admission: the prompt plus the reply
   * cap) by a new figure: a client that left is held to what it was sent until its row is written.
   */
  reserve(tokens: number): void;
}

/** Proof that a request was already counted against its key's requests-per-minute. */
export interface RateCounted {
  readonly counted: true;
}

export interface AdmissionOptions {
  /** Global cap on concurrent CLI processes. */
  maxConcurrent: number;
  /** Requests that may wait for a slot, across all keys. */
  queueSize: number;
  /** How long a request may wait for a slot. */
  queueTimeoutMs: number;
  /** prompt + completion tokens a key used (successful requests) since a time. */
  tokensSince(keyId: string, sinceMs: number): number;
  /**
   * CLIs a key holds past its requests (its parked tool-call turns): they count against its
   * concurrency, and at its limit the oldest is retired (`shed`) to admit a newer request.
   */
  held?: { countFor(keyId: string): number; shedOldest(keyId: string, reason: 'key_concurrency'): boolean };
  now?: () => number;
}
