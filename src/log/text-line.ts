// `--log-format text`: a pino JSON line as one line for a person to read.

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

/** Control characters a terminal would act on, shown as escapes (a log line may carry a client's string). */
function escapeControls(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) =>
    c === '\n' ? '\\n' : c === '\t' ? '\t' : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
}

/** Fields every record has or the line says otherwise. */
const PLAIN = new Set(['level', 'time', 'service', 'msg', 'event', 'err', 'pid', 'hostname']);

/** One pino JSON line as one line for a person: time, level, message, the other fields as key=value. */
export function toTextLine(json: string): string {
  let r: Record<string, unknown> & { err?: { message?: unknown } };
  try {
    r = JSON.parse(json) as typeof r;
  } catch {
    return json;
  }
  const time = typeof r.time === 'string' ? r.time.slice(11, 19) : '';
  const level = (LEVELS[Number(r.level)] ?? String(r.level)).padEnd(5);
  const msg = String(r.msg ?? r.event ?? '');
  const err = typeof r.err?.message === 'string' && r.err.message !== msg ? `: ${r.err.message}` : '';
  const fields = Object.entries(r)
    .filter(([k, v]) => !PLAIN.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === 'string' && !/[\s"]/.test(v) ? v : JSON.stringify(v)}`);
  return `${time} ${level} ${escapeControls([msg + err, ...fields].join(' '))}\n`;
}
