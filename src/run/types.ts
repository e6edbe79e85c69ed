import type { Backend, BackendEvent, Turn, TurnOutcome } from '../backends/index.js';
import type { Logger } from '../log/index.js';
import type { RunLimits, ProcessSupervisor } from '../process/index.js';
import type { Lease, SessionPlan } from '../sessions/index.js';
import type { createParkedTurns, ParkedTurn, ToolBridge, ToolSpec } from '../tools/index.js';
import type { ProcessCap, Worker, WorkerFit, WorkerPool } from '../workers/index.js';
import type { SlotReset, Workspaces } from '../workspace/index.js';
import type { RefreshGate } from '../logins/index.js';
import type { TurnInterrupt } from './interrupt.js';

export type { TurnInterrupt } from './interrupt.js';

/**
 * How a turn ran: a fresh CLI, a CLI resuming its session from disk, a live worker, a pre-started
 * CLI, or a tool-call turn continued.
 */
export type RunMode = 'cold' | 'resumed' | 'warm' | 'prestarted' | 'parked';

export interface ToolRunDeps {
  bridge: ToolBridge;
  /** How long a turn may wait, parked, for the client's tool results. */
  parkTtlMs: number;
}

export interface RunDeps {
  supervisor: ProcessSupervisor;
  workspaces: Workspaces;
  hostEnv: Readonly<Record<string, string | undefined>>;
  limits: RunLimits;
  /** Replay mode: nothing is spawned, so no credential is linked either. */
  replay?: boolean;
  /** Live workers: continued turns of a session slot go to a process kept from its last turn. */
  workers?: WorkerPool;
  /** The cap on every CLI process olp holds: a spawn waits for room (`supervisor` is its own). */
  cap?: ProcessCap;
  /** One refresher per login file: while its token is about to expire, its runs start one at a time. */
  refresh?: RefreshGate;
  /** Event types a CLI printed that olp does not know, already logged (each is logged once per daemon). */
  unknownEvents?: Set<string>;
  /** The client's functions: olp's MCP bridge and how long a turn may wait for tool results. */
  tools?: ToolRunDeps;
  /** Tool-call turns waiting for the client's results (when the daemon serves tools). */
  parked?: ParkedTurns;
  /**
   * Pre-started CLIs (with workers): after a key's turn, a spare is started in the slot its next
   * new conversation will take (the session pool's `nextFresh`), for the model it just used.
   */
  prestart?: {
    sessions: { nextFresh(keyId: string, backend: string): number | undefined };
    /** No spare is started while the machine has less memory available than this. */
    minFreeBytes: number;
    /** The machine's available memory, recently read (see `createMemoryGauge`). */
    availableMemory(): number;
  };
}

/** What a turn asks for, before its session plan is known: the lease's plan makes it a `Turn`. */
export type TurnBase = Omit<Turn, 'session' | 'prompt' | 'live'> & { system: string | null };

/** One CLI turn a request runs under its session lease. */
export interface RunInput {
  keyId: string;
  requestId: string;
  backend: Backend;
  turn: TurnBase;
  lease: Lease;
  /** Aborted when the client goes away; kills the CLI's process group. */
  signal: AbortSignal;
  log: Logger;
  /** The client's functions offered to the model (see tool.ts). */
  tools?: readonly ToolSpec[];
  /**
   * The turn parked on exactly the calls whose results this request brings, claimed before
   * admission: the plan takes it out (it goes on, or is retired when the lease says otherwise).
   */
  parked?: { plan: ParkedPlan | undefined };
  /** The conversation's way to end the turn early (at a stop sequence): see `TurnInterrupt`. */
  interrupt?: TurnInterrupt;
}

/** A parked tool-call turn: the CLI mid-turn, blocked on its MCP calls to olp's bridge. */
export interface ToolParkedTurn extends ParkedTurn {
  /** The live-worker slot its CLI serves, when it is kept for the conversation's later turns. */
  readonly slot?: string | undefined;
  /**
   * Goes on with the client's results (by tool call id): the bridge answers the CLI's calls and
   * the rest of the turn streams from the same process. Undefined when the CLI is gone (the
   * caller runs a fresh turn instead): nothing was yielded then.
   */
  resume(
    results: ReadonlyMap<string, string>,
    signal: AbortSignal,
    log: Logger,
  ): AsyncGenerator<BackendEvent, RunOutcome | undefined>;
}

/** A turn's outcome, and how it ran; `parked` when it stopped at calls of the client's functions. */
export type RunOutcome = TurnOutcome & { run: RunMode; parked?: ToolParkedTurn };

/** The slot's live worker a cold turn may become (claude: its cold process serves later turns). */
export interface LiveSlot {
  pool: WorkerPool;
  slot: string;
  fit: WorkerFit;
}

/** A slot live workers serve, and the turn as planned for it: the work that follows a turn there. */
export interface Pooled extends LiveSlot {
  turn: Turn;
  session: SessionPlan;
}

/** A turn in a fresh process: `live` when it may be kept as the slot's worker. */
export interface ColdPlan {
  mode: 'cold' | 'resumed';
  /** The lease's session plan this was planned from. */
  session: SessionPlan;
  turn: Turn;
  live: LiveSlot | false;
  reset?: SlotReset | undefined;
  pooled?: Pooled | undefined;
}

/** A turn written to a process already running: the slot's warm worker, or a spare's first turn. */
export interface LivePlan {
  mode: 'warm' | 'prestarted';
  session: SessionPlan;
  turn: Turn;
  worker: Worker;
  /** The line(s) the CLI is sent. */
  write: string;
  /** Where the turn goes when the CLI shows no sign of life (nothing was yielded). */
  fallback(): Promise<ColdPlan>;
  pooled: Pooled;
}

/**
 * A turn that offers the client's functions: it may park on their calls. Its CLI is spawned
 * (`cold`, `resumed`) or is the slot's warm worker started with the same tools (`warm`); with
 * `pooled`, a CLI that gives its final answer is kept as the slot's worker.
 */
export interface ToolPlan {
  mode: 'tool';
  run: 'cold' | 'resumed' | 'warm';
  session: SessionPlan;
  turn: Turn;
  tools: readonly ToolSpec[];
  deps: ToolRunDeps;
  pooled?: Pooled | undefined;
  reset?: SlotReset | undefined;
  /** `warm`: the worker, the line it is sent, and where the turn goes when it shows no sign of life. */
  worker?: Worker;
  write?: string;
  fallback?: () => Promise<ToolPlan>;
}

/** A parked turn the lease's plan continues: the request's tool results go to its CLI. */
export type ParkedRunPlan = ParkedPlan & { session: SessionPlan };

/** How one CLI turn runs, decided once by `planTurn`; each mode has one executor. */
export type RunPlan = ColdPlan | LivePlan | ToolPlan | ParkedRunPlan;

/** A turn parked on exactly the calls whose results a request brings. */
export interface ParkedPlan {
  mode: 'parked';
  turn: ToolParkedTurn;
  results: ReadonlyMap<string, string>;
}

/** The daemon's parked tool-call turns (src/tools' registry, of this stage's turns). */
export type ParkedTurns = ReturnType<typeof createParkedTurns<ToolParkedTurn>>;
