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
  let active = 0;

  function closest(call: CallMeta): string {
    const same = recording.calls.filter((c) => c.start.backend === call.backend);
    const best = same.find((c) => c.start.model === call.model) ?? same[0] ?? recording.calls[0];
    if (!best) return 'the recording has no calls';
    return `backend ${call.backend}, model ${call.model}, prompt sha256 ${promptHash(call.prompt).slice(0, 12)}…; closest recorded call is #${best.start.index} (backend ${best.start.backend}, model ${best.start.model}, prompt sha256 ${best.start.prompt_sha256.slice(0, 12)}…)`;
  }

  return {
    backends: new Set(recording.calls.map((c) => c.start.backend)),
    run(_inv: Invocation, _limits: RunLimits, signal: AbortSignal, _log?: Logger, call?: CallMeta): RunningProcess {
      if (!call) throw replayNoMatch('the call carries no description');
      const k = `${call.backend}\u0000${call.model}\u0000${promptHash(call.prompt)}`;
      const list = byKey.get(k);
      if (!list) throw replayNoMatch(closest(call));
      const n = served.get(k) ?? 0;
      served.set(k, n + 1);
      const rec = list[n % list.length]!;
      const t0 = performance.now();
      let aborted = false;
      active++;
      let finish!: (e: ExitInfo) => void;
      const exit = new Promise<ExitInfo>((resolve) => (finish = resolve));
      let started = false;
      // A call aborted before anyone read it still ends.
      signal.addEventListener(
        'abort',
        () => {
          if (started) return;
          active--;
          finish({
            reason: 'aborted',
            exitCode: null,
            signal: 'SIGTERM',
            stderr: '',
            pid: undefined,
            durationMs: performance.now() - t0,
          });
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
          active--;
          const durationMs = performance.now() - t0;
          finish(
            aborted || signal.aborted
              ? { reason: 'aborted', exitCode: null, signal: 'SIGTERM', stderr: '', pid: undefined, durationMs }
              : {
                  reason: 'exit',
                  exitCode: rec.end.exit_code,
                  signal: rec.end.signal,
                  stderr: rec.end.stderr,
                  pid: undefined,
                  durationMs,
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
    },
    get active() {
      return active;
    },
    killAll: async () => undefined,
  };
}
