import type { Logger } from '../log/index.js';
import type { BridgeSession } from '../tools/index.js';
import type { RunningProcess } from '../process/index.js';
import type { Workspace } from '../workspace/index.js';

/** What a live worker was started with: a turn it serves must ask for exactly the same. */
export interface WorkerFit {
  sessionId: string;
  cliModel: string;
  /** Hash of the system prompt the process was started with. */
  system: string;
  maxOutputTokens: number | undefined;
  /** Fingerprint of the client's tools the process offers (names, schemas): '' for none. */
  tools: string;
  /** The login whose credential the process holds: '' for the machine's own. */
  login: string;
  /** How much the model thinks, as the process was started (`reasoningKey`): '' for the CLI's default. */
  reasoning: string;
}

/** A process that just answered a turn and can serve the next one. */
export interface LiveRun {
  proc: RunningProcess;
  lines: AsyncIterator<string>;
  ws: Workspace;
  /** Aborting it stops the process (its reason becomes the exit reason). */
  life: AbortController;
  /** The CLI's running cost figure after the turn (claude reports the process's total). */
  cost: number;
  /** The client's tools the process was started with: olp's MCP bridge session, closed when it goes. */
  tools?: BridgeSession | undefined;
}

export interface Worker extends LiveRun {
  readonly slot: string;
  readonly keyId: string;
  fit: WorkerFit;
  readonly startedAt: number;
  turns: number;
  lastUsedAt: number;
  /** `starting`: started for a slot's session and not up yet; `spare`: started before its conversation. */
  state: 'idle' | 'busy' | 'retiring' | 'spare' | 'starting';
  /** Its key was revoked mid-turn: retired as soon as the turn ends. */
  revoked?: boolean;
  /** Busy with a turn that waits, parked, for the client's tool results. */
  parked?: boolean;
  /** `starting`: resolves true once it is up (false: it failed to come up). */
  up?: Promise<boolean>;
  /** What it held when last measured at rest (PSS of its process group, bytes). */
  memBytes?: number;
  /** When `memBytes` was read. */
  memAt?: number;
}

/** A CLI started before it has a conversation, for a key's next new conversation in one slot. */
export interface Spare {
  worker: Worker;
  backend: string;
  /** Resolves true once the CLI has answered its first control request (it is up). */
  ready: Promise<boolean>;
  isReady: boolean;
}

export type { RetireReason } from './retire-reason.js';

export interface WorkerInfo {
  slot: string;
  pid: number | undefined;
  /** `starting`: a spare not up yet. */
  state: Worker['state'] | 'starting' | 'parked';
  model: string;
  turns: number;
  ageS: number;
  idleS: number;
  rssMb: number | null;
  /** Its PSS (with its children's) when last measured at rest; null before. */
  pssMb: number | null;
}

export interface WorkerPoolOptions {
  /** Most live workers at once; 0 turns workers off. */
  max: number;
  idleMs: number;
  maxAgeMs: number;
  maxTurns: number;
  /** Between closing a retired worker's stdin and killing it. */
  retireGraceMs: number;
  logger: Logger;
  now?: () => number;
  /**
   * The memory budget of the live CLIs that run nothing (idle workers, spares), in bytes; beyond it
   * the least valuable are retired (see budget.ts). Unset: no budget (only `max`).
   */
  memoryBytes?: number | undefined;
  /** Reads what a process holds in bytes (default: PSS from /proc); null when it is gone. */
  measure?: ((pid: number | undefined) => Promise<number | null>) | undefined;
  /** Whether the machine is short of memory now (default: /proc/pressure/memory and MemAvailable). */
  pressure?: (() => boolean) | undefined;
  /** How often the CLIs at rest are measured and the budget applied (default 5 s). */
  sampleMs?: number | undefined;
  /** Most CLIs at rest one key holds besides its share of the budget (its session slots and a spare). */
  keySlots?: number | undefined;
  /** How long after its last turn a key counts as active for its share and its spares (default 10 min). */
  activeMs?: number | undefined;
}
