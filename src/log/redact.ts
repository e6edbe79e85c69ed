// Unconditional redaction for everything a CLI says that leaves the process: recordings, logs, client messages.
// There is no switch to turn it off.

const MARK = '[REDACTED]';
/** Query parameter names that carry secrets. */
const SECRET_PARAMS = [
  'api[_-]?key',
  'key',
  'token',
  'access[_-]?token',
  'refresh[_-]?token',
  'auth',
  'secret',
  'password',
  'passwd',
  'sig',
  'signature',
  'client[_-]?secret',
].join('|');
/** Words that make a JSON field name a secret's. */
const SECRET_FIELDS = [
  'api[_-]?key',
  'apikey',
  'token',
  'secret',
  'password',
  'passwd',
  'authorization',
  'credential',
  'private[_-]?key',
].join('|');

const PATTERNS: [RegExp, string][] = [
  // Authorization header values: Bearer/Basic credentials.
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{4,}/gi, `$1 ${MARK}`],
  // URL userinfo: scheme://user:pass@host
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@:"']+(?::[^\s/@"']*)?@/gi, `$1${MARK}@`],
  // Secret-looking query parameters.
  [new RegExp(`([?&](?:${SECRET_PARAMS})=)[^&\\s"'#]+`, 'gi'), `$1${MARK}`],
  // Known token shapes: Anthropic, OpenAI, olp keys, GitHub, Slack, AWS, Google.
  [/\bsk-ant-[A-Za-z0-9_-]{8,}/g, MARK],
  [/\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}/g, MARK],
  [/\bolpk_[A-Za-z0-9_-]{8,}/g, MARK],
  [/\bgh[pousr]_[A-Za-z0-9]{20,}/g, MARK],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,}/g, MARK],
  [/\bAKIA[0-9A-Z]{16}\b/g, MARK],
  [/\bAIza[0-9A-Za-z_-]{35}\b/g, MARK],
  // JSON or key=value fields named like secrets: "api_key": "…", token=…
  [new RegExp(`("(?:[A-Za-z_]*(?:${SECRET_FIELDS})[A-Za-z_]*)"\\s*:\\s*")(?:[^"\\\\]|\\\\.)*(")`, 'gi'), `$1${MARK}$2`],
  [/\b((?:[A-Z_]*(?:API_KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)[A-Z_]*)=)[^\s"']+/g, `$1${MARK}`],
];

/** The text with every secret-looking value replaced by `[REDACTED]`. */
export function redact(text: string): string {
  let out = text;
  for (const [re, to] of PATTERNS) out = out.replace(re, to);
  return out;
}

/**
 * Lines where a CLI repeats the input it could not parse (claude 2.1.197: `Error parsing streaming input line:
 * <line>`).
 */
const ECHO_PREFIX = /^(.*?error parsing (?:streaming )?input line:?)\s*.+$/i;
const ECHO_MARK = '[input omitted]';
/** Inputs up to this size are searched for echoed fragments; larger ones rely on the known prefixes. */
const ECHO_SEARCH_LIMIT = 2 * 1024 * 1024;
const ECHO_WINDOW = 32;

/** True when the line repeats a stretch of the input (a CLI quoting the prompt back in an error). */
function echoesInput(line: string, input: string): boolean {
  if (line.length < ECHO_WINDOW || input.length < ECHO_WINDOW || input.length > ECHO_SEARCH_LIMIT) return false;
  const colon = line.indexOf(': ');
  const offsets = new Set([
    0,
    colon === -1 ? 0 : colon + 2,
    Math.max(0, Math.floor(line.length / 2) - ECHO_WINDOW / 2),
    line.length - ECHO_WINDOW,
  ]);
  for (const at of offsets) {
    const window = line.slice(at, at + ECHO_WINDOW);
    if (window.length === ECHO_WINDOW && window.trim().length >= ECHO_WINDOW / 2 && input.includes(window)) return true;
  }
  return false;
}

/**
 * A CLI's stderr made safe to show or store: secrets redacted, and lines that echo the request's
 * input (the prompt) replaced by a marker. `input` is what was written to the CLI's stdin.
 */
export function sanitizeStderr(stderr: string, input = ''): string {
  if (stderr === '') return stderr;
  const lines = stderr.split('\n').map((line) => {
    const m = ECHO_PREFIX.exec(line);
    if (m) return `${m[1]} ${ECHO_MARK}`;
    return echoesInput(line, input) ? ECHO_MARK : line;
  });
  return redact(lines.join('\n'));
}
