// `olp doctor`'s question to an olp that may be listening: GET /health, and what its answer (or the
// lack of one) came to.

/** The address to reach a listener on `host` from this machine (a wildcard bind answers on loopback). */
function toReachable(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** What GET /health at a port in use came to. */
export type HealthAnswer =
  /** olp's answer: `{"status": "ok" | "degraded" | "draining"}`. */
  | { kind: 'olp'; status: string }
  /** An answer that is not olp's, or a connection closed without one. */
  | { kind: 'other' }
  /** Nothing listens (the connection was refused). */
  | { kind: 'refused' }
  /** The connection was accepted, but no whole answer came within the time. */
  | { kind: 'timeout' };

/** fetch's cause codes (one per address tried when a name resolves to several). */
function causeCodes(err: unknown): string[] {
  const cause = (err as { cause?: { code?: unknown; errors?: { code?: unknown }[] } }).cause;
  const all = [cause, ...(cause?.errors ?? [])];
  return all.map((c) => c?.code).filter((c): c is string => typeof c === 'string');
}

/** Asks GET /health at host:port, waiting at most `timeoutMs` for the whole answer. */
export async function askHealth(host: string, port: number, timeoutMs: number): Promise<HealthAnswer> {
  try {
    const res = await fetch(`http://${toReachable(host)}:${port}/health`, { signal: AbortSignal.timeout(timeoutMs) });
    const body = (await res.json()) as { status?: unknown };
    return typeof body.status === 'string' ? { kind: 'olp', status: body.status } : { kind: 'other' };
  } catch (err) {
    if ((err as Error).name === 'TimeoutError') return { kind: 'timeout' };
    const codes = causeCodes(err);
    if (codes.length > 0 && codes.every((c) => c === 'ECONNREFUSED')) return { kind: 'refused' };
    return { kind: 'other' };
  }
}
