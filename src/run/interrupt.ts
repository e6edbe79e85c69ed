import { stopProcess } from '../process/index.js';

/**
 * How the conversation ends a turn early without ending its CLI: while a live CLI's turn is read,
 * the run sets `stop`, which asks the CLI to interrupt the turn (true: asked; the turn then ends
 * by itself, ok, with its usage, and the CLI serves the next turn). Unset, or false: the turn can
 * only be cut, which stops its process.
 */
export interface TurnInterrupt {
  stop?: (() => boolean) | undefined;
  /** The reply as the client has it, cut at the sequence: what the slot remembers of the turn. */
  kept?: string;
}

/**
 * Asks a CLI to interrupt its turn on its stdin, if its protocol has a way (false: it has none);
 * a write that fails stops the process instead.
 */
export function interruptTurn(
  proc: { write(line: string): Promise<boolean> },
  parser: { interrupt?(): string },
  life: AbortController,
): boolean {
  const line = parser.interrupt?.();
  if (!line) return false;
  void proc.write(line).then((ok) => {
    if (!ok) stopProcess(life, 'done');
  });
  return true;
}
