import type { ProxyError } from '../errors/index.js';
import type { ReasoningSetting, StopReason } from '../core/index.js';
import type { ExitInfo, Invocation } from '../process/index.js';
import type { ImageLimits, Prompt, TranscriptPolicy } from '../transcript/index.js';
import type { PlanReport } from '../plan/index.js';
import type { ToolSpec } from '../tools/index.js';
import type { Link, WorkspaceFile } from '../workspace/index.js';

/** Token counts for one turn: the CLI's own figures and the OpenAI-normalised ones. */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  /** The counts exactly as the CLI reported them (names as the CLI spells them). */
  raw: Record<string, number>;
  /** The CLI's own cost figure, when it reports one. */
  costUsd?: number;
}

/** What a backend's parser yields while the CLI runs. */
export type BackendEvent =
  | { type: 'session'; sessionId: string; model?: string }
  | { type: 'text'; text: string }
  /**
   * The model's thinking, as the CLI reports it (claude's `thinking` blocks): not the reply's text.
   * A piece of the block's text, or (text '') the provider's signature of the block, which ends it.
   */
  | { type: 'thinking'; text: string; signature?: string }
  /** The CLI is retrying its provider: not progress (the idle timer keeps running). */
  | { type: 'retry'; message: string }
  /** The model starts a call of one of the client's functions (`index` counts the step's calls from 0). */
  | { type: 'tool_call'; index: number; id: string; name: string }
  /** A piece of that call's JSON arguments. */
  | { type: 'tool_args'; index: number; text: string }
  /** What the CLI says of its login's plan window (see src/plan). */
  | { type: 'plan'; report: PlanReport }
  /**
   * The CLI abandoned the model message it was streaming (the provider's stream broke and it asks
   * the model again): the last `events` text and tool events of this turn, `text` among them,
   * belong to no answer. Always the newest events: it is said before the next attempt's first.
   */
  | { type: 'abandoned'; text: string; events: number };

/** How a turn ended, decided once stdout is exhausted and the process has exited. */
export type TurnOutcome =
  | { ok: true; stopReason: StopReason; usage: Usage | null; sessionId?: string }
  | { ok: false; error: ProxyError; usage: Usage | null; sessionId?: string };

/** A step of the turn that ended in calls of the client's functions: the CLI now waits for their results. */
export interface ToolStep {
  calls: { id: string; name: string; arguments: string }[];
  /** The step's own model call(s). */
  usage: Usage | null;
  /**
   * The CLI reports each call as it makes it, not where the model's message ends (codex exec):
   * the step is taken as whole once every call reached olp's bridge and the CLI went quiet.
   */
  open?: boolean;
}

/** Stateful, I/O-free translator of one run's stdout lines. */
export interface EventParser {
  push(line: string): BackendEvent[];
  /** True once the turn's final event has been read: nothing after it changes the outcome. */
  readonly complete: boolean;
  /** Set when the model's message ended in tool calls (the turn goes on once their results are in). */
  readonly toolStep?: ToolStep | undefined;
  /** Clears `toolStep` before the turn goes on; later usage is reported without the steps'. */
  continueAfterTools?(): void;
  /** A live CLI's stdin line that interrupts its turn; the turn then ends ok (`interrupted`), with usage. */
  interrupt?(): string;
  /** Event types (or `type/subtype`s) the parser met and does not know: a newer CLI's (logged once). */
  readonly unknown?: ReadonlySet<string>;
  finish(exit: ExitInfo): TurnOutcome;
}

/** How a CLI continues a session under a new id (see `Backend.forks`). */
export interface ForkSupport {
  keepsSource: boolean;
}

/** How the CLI should treat its own session for this turn (decided by the session pool). */
export interface SessionUse {
  mode: 'fresh' | 'resumed' | 'ephemeral';
  /** The id to create (`fresh`) or resume (`resumed`). */
  sessionId?: string;
  /** The pool slot, for a stable working directory. */
  slot?: number;
  /** `fresh`: the session the slot held before (see `SessionPlan.previousSessionId`). */
  previousSessionId?: string;
  /** `fresh`: the session the new one continues as a copy (see `SessionPlan.forkOf`). */
  forkOf?: string;
}

/**
 * A login's credential for one CLI (src/logins), given to a run in place of the machine's own:
 * a token for the CLI's environment (claude: a setup token, or `apiKey`, an Anthropic API key for
 * ANTHROPIC_API_KEY) or a credential file to link into its home (codex: the login's auth.json).
 */
export interface LoginUse {
  name: string;
  token?: string;
  apiKey?: string;
  file?: string;
}

/** One request's work for a backend, after routing and rendering. */
export interface Turn {
  prompt: Prompt;
  /** The CLI's own model name or alias. */
  cliModel: string;
  maxOutputTokens?: number;
  /** How much the model thinks (absent: the CLI's default); part of what a live CLI must have been started with. */
  reasoning?: ReasoningSetting | undefined;
  session?: SessionUse;
  /** olp's MCP server for the client's functions: `url` holds the token; `endpoint` + `token` for a bearer header. */
  tools?: { specs: readonly ToolSpec[]; url: string; endpoint: string; token: string; timeoutMs: number };
  /** A JSON Schema the reply must conform to: the CLI's own structured output. */
  outputSchema?: Record<string, unknown>;
  /** Start the CLI so that it can serve later turns of this session (see `Backend.live`). */
  live?: boolean;
  /** The key's login, when it is not the machine's own: its credential replaces the machine's. */
  login?: LoginUse;
  /**
   * Start the CLI before its conversation exists (a spare): no prompt, no system prompt (it comes
   * with `live.init`), and the CLI picks its own session id.
   */
  prestart?: boolean;
}

/** A CLI's own status commands, and the commands that fix what they report. */
export interface CliStatus {
  versionArgs: readonly string[];
  loginArgs: readonly string[];
  /** Logged in, from the login command's exit code and output. */
  loggedIn(exitCode: number | null, stdout: string, stderr: string): boolean;
  /** Logged in by an API key or token the CLI was given, not by its login file (then no file needs pointing at). */
  keyLogin?(stdout: string, stderr: string): boolean;
  loginCommand: string;
  installCommand: string;
}

/** Where a spawn runs; the backend only needs paths. */
export interface Place {
  home: string;
  /** The slot's persistent directory (inside the request's workspace when there is no slot). */
  persistent: string;
  cwd: string;
  path(name: string): string;
}

/** What a backend asks of the environment: variables it sets, host variables it passes, and ones it never passes. */
export interface EnvPolicy {
  set: Readonly<Record<string, string>>;
  pass: readonly string[];
  deny(name: string): boolean;
}

export interface Prepared {
  invocation: Omit<Invocation, 'env' | 'cwd'>;
  files: WorkspaceFile[];
}

export interface ModelEntry {
  /** Public id clients send (`claude-sonnet-4-5`, `sonnet`). */
  id: string;
  /** Name handed to the CLI's model flag. */
  cliModel: string;
  created: number;
  /** The most output tokens the model writes in one reply (its vendor's documented cap). */
  maxOutputTokens?: number;
}

/**
 * A backend knows one CLI: the files it needs linked, the environment it needs, how to turn a
 * prepared turn into an invocation and how to read its output. It performs no I/O itself.
 */
export interface Backend {
  readonly id: string;
  /** Executable to run (path or name on PATH). */
  readonly bin: string;
  /** Shown in `owned_by`, and the ledger's `provider` tag (backfill tools exclude rows by it). */
  readonly owner: string;
  /** How the CLI reports its version and login, and what fixes each. */
  readonly status: CliStatus;
  /** How the conversation is rendered for this CLI (tool ids, images). */
  transcriptPolicy(limits: ImageLimits): TranscriptPolicy;
  readonly models: readonly ModelEntry[];
  /** Decides whether an id not in `models` is still passed through to the CLI. */
  acceptsModel(id: string): boolean;
  /** The operator's login files this backend links into each run (checked at start and by doctor). */
  readonly credentials: readonly string[];
  /** Environment variables that carry a provider key: passed only when the operator names them. */
  readonly apiKeyVars: readonly string[];
  /** Files to link into the run's home; `persistent` links point into the slot's persistent dir. */
  links(turn: Turn): Link[];
  /**
   * The login file the turn's CLI may refresh and rewrite, and when its access token expires
   * (epoch ms; null when it holds nothing that expires): undefined when the turn's credential is
   * not such a file (a setup token, an API key).
   */
  refreshable?(turn: Turn): { file: string; expiresAt(text: string): number | null } | undefined;
  /** Directories the CLI needs in its home even when nothing is linked there. */
  homeDirs?: readonly string[];
  envPolicy(turn: Turn, place: Place): EnvPolicy;
  prepare(turn: Turn, place: Place): Prepared;
  createParser(): EventParser;
  /** Errors raised before or instead of a run (binary missing, spawn failures). */
  spawnError(exit: ExitInfo): ProxyError;
  /** The CLI reports a session's running total, not the turn's (codex). */
  cumulativeUsage?: boolean;
  /**
   * The CLI can start a new session as a continuation of an old one (`SessionUse.forkOf`): a
   * rotated slot then keeps the CLI's own, possibly compacted, history instead of re-sending the
   * transcript. `keepsSource`: the fork reads the old session's files on every later run (codex's
   * rollout lineage), so they stay until the slot starts over; otherwise (claude) the fork is a
   * copy and the old files go once it has read them.
   */
  forks?: ForkSupport;
  /**
   * A structured reply made to fit the client's schema again, when the CLI was given another
   * form of it (codex: the strict form). The conversation then hands the reply on whole.
   */
  fitReply?(text: string, schema: Record<string, unknown>): string;
  /** This turn's usage from a running total and the session's previous total. */
  rebaseUsage?(usage: Usage, base: Readonly<Record<string, number>>): Usage;
  /**
   * The CLI can serve more turns of one session in a live process (a worker, see src/workers):
   * how to write one more user turn to it and read the answer.
   */
  live?: {
    /**
     * true: the process that answered a cold turn (started with `Turn.live`) is kept as the
     * worker (claude). false: a worker is started after the cold turn with `resume` (codex).
     */
    coldIsLive: boolean;
    /** One more user turn of session `sessionId`, as a line for the worker's stdin. */
    input(prompt: Pick<Prompt, 'text' | 'images'>, sessionId: string, outputSchema?: Record<string, unknown>): string;
    /** The parser of a worker's turn, when its protocol is not the cold run's. */
    parser?(): EventParser;
    /** Whether a starting CLI is up, from one line of its output: true up, false failed, undefined not yet. */
    ready(line: string): boolean | undefined;
    /** A worker that loads an existing session (after a cold turn), for `coldIsLive: false`. */
    resume?(turn: Turn, place: Place): Prepared;
    /** A CLI started before its conversation exists (`Turn.prestart`): its system prompt comes with `init`. */
    spare?: { init(system: string | null, outputSchema?: Record<string, unknown>): string };
  };
}
