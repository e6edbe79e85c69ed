import { replayNoMatch } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import type { CallMeta, ExitInfo, Invocation, ProcessSupervisor, RunLimits, RunningProcess } from '../process/index.js';
import type { Appender } from './files.js';
import { promptHash, type RecordedCall, type Recording } from './format.js';
import { redact } from '../log/index.js';
import { scrubToolData } from './scrub.js';

/** Wraps the real supervisor: every call is run as usual and written to the recording as it happens. */
export function createRecordingSupervisor(inner: ProcessSupervisor, out: Appender): ProcessSupervisor {
  return {
    run(inv: Invocation, limits: RunLimits, signal: AbortSignal, log?: Logger, call?: CallMeta): RunningProcess {
      const proc = inner.run(inv, limits, signal, log, call);
      const index = out.nextIndex();
      const t0 = performance.now();
      out.write({
        type: 'call_start',
        index,
        backend: call?.backend ?? 'unknown',
        model: call?.model ?? '',
        invocation: { command: redact(inv.command), args: inv.args.map(redact) },
        prompt_sha256: promptHash(call?.prompt ?? inv.stdin),
      });
      async function* lines(): AsyncGenerator<string> {
        for await (const line of proc.lines) {
          out.write({
            type: 'event',
            index,
            offset_ms: Math.round(performance.now() - t0),
            line: redact(scrubToolData(line)),
          });
          yield line;
        }
      }
      const exit = proc.exit.then((e) => {
        out.write(
          {
            type: 'call_end',
            index,
            exit_code: e.exitCode,
            signal: e.signal,
            duration_ms: Math.round(e.durationMs),
            stderr: e.stderr.slice(-4096),
          },
          true,
        ); // already redacted by the supervisor (sanitizeStderr)
        return e;
      });
      return { ...proc, lines: lines(), exit };
    },
    get active() {
      return inner.active;
    },
    killAll: () => inner.killAll(),
  };
}

/** Where a call that matches no recorded one differs from the closest one that is recorded. */
function closest(recording: Recording, call: CallMeta): string {
  const same = recording.calls.filter((c) => c.start.backend === call.backend);
  const best = same.find((c) => c.start.model === call.model) ?? same[0] ?? recording.calls[0];
  if (!best) return 'the recording has no calls';
  const b = best.start;
  return (
    `backend ${call.backend}, model ${call.model}, prompt sha256 ${promptHash(call.prompt).slice(0, 12)}…; ` +
    `closest recorded call is #${b.index} (backend ${b.backend}, model ${b.model}, ` +
    `prompt sha256 ${b.prompt_sha256.slice(0, 12)}…)`
  );
}

/** One recorded call played back as a running process; `count.active` holds it until it ends. */
function replayCall(rec: RecordedCall, speed: number, signal: AbortSignal, count: { active: number }): RunningProcess {
  const t0 = performance.now();
  let aborted = false;
  count.active++;
  let finish!: (e: ExitInfo) => void;
  const exit = new Promise<ExitInfo>((resolve) => (finish = resolve));
  let started = false;
  const abortedExit = (): ExitInfo => ({
    reason: 'aborted',
    exitCode: null,
    signal: 'SIGTERM',
    stderr: '',
    pid: undefined,
    durationMs: performance.now() - t0,
  });
  // A call aborted before anyone read it still ends.
  signal.addEventListener(
    'abort',
    () => {
      if (started) return;
      count.active--;
      finish(abortedExit());
    },
    { once: true },
  );
  async function* lines(): AsyncGenerator<string> {
    if (signal.aborted) return;
    started = true;
    try {
      for (const ev of rec.events) {
        const wait = speed > 0 ? ev.offset_ms * speed - (performance.now() - t0) : 0;
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        if (signal.aborted) {
          aborted = true;
          return;
        }
        yield ev.line;
      }
    } finally {
      count.active--;
      const { exit_code, signal: endSignal, stderr } = rec.end;
      finish(
        aborted || signal.aborted
          ? abortedExit()
          : {
              reason: 'exit',
              exitCode: exit_code,
              signal: endSignal,
              stderr,
              pid: undefined,
              durationMs: performance.now() - t0,
            },
      );
    }
  }
  return {
    pid: undefined,
    lines: lines(),
    exit,
    progress: () => undefined,
    write: async () => false,
    endInput: () => undefined,
    hold: () => undefined,
    expect: () => undefined,
    stop: () => undefined,
  };
}

/**
 * Serves recorded calls in place of CLI processes: never spawns, never reads credentials. A call
 * matches by backend, model and prompt hash; repeats are served in recorded order, then again
 * from the first. `speed` 0 replays as fast as possible, 1 at the recorded pace.
 */
export function createReplaySupervisor(
  recording: Recording,
  speed: number,
): ProcessSupervisor & { backends: Set<string> } {
  const byKey = new Map<string, RecordedCall[]>();
  const served = new Map<string, number>();
  for (const c of recording.calls) {
    const k = `${c.start.backend}\u0000${c.start.model}\u0000${c.start.prompt_sha256}`;
    byKey.set(k, [...(byKey.get(k) ?? []), c]);
  }
  const count = { active: 0 };

  return {
    backends: new Set(recording.calls.map((c) => c.start.backend)),
    run(_inv: Invocation, _limits: RunLimits, signal: AbortSignal, _log?: Logger, call?: CallMeta): RunningProcess {
      if (!call) throw replayNoMatch('the call carries no description');
      const k = `${call.backend}\u0000${call.model}\u0000${promptHash(call.prompt)}`;
      const list = byKey.get(k);
      if (!list) throw replayNoMatch(closest(recording, call));
      const n = served.get(k) ?? 0;
      served.set(k, n + 1);
      const rec = list[n % list.length]!;
      return replayCall(rec, speed, signal, count);
    },
    get active() {
      return count.active;
    },
    killAll: async () => undefined,
  };
}
