/** Tracks in-flight requests so shutdown can stop taking new ones and wait for the rest. */
export function createLifecycle() {
  let inflight = 0;
  let draining = false;
  let waiters: (() => void)[] = [];
  return {
    get draining(): boolean {
      return draining;
    },
    get inflight(): number {
      return inflight;
    },
    begin(): void {
      inflight++;
    },
    end(): void {
      inflight--;
      if (inflight === 0) {
        for (const w of waiters) w();
        waiters = [];
      }
    },
    /** Refuse new requests from now on. */
    drain(): void {
      draining = true;
    },
    /** Resolves when nothing is in flight. */
    idle(): Promise<void> {
      return inflight === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve));
    },
  };
}

export type Lifecycle = ReturnType<typeof createLifecycle>;
