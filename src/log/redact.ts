// Unconditional redaction for everything a CLI says that leaves the process: recordings, logs, client messages.
// There is no switch to turn it off. (A CLI's stderr is also cleared of the input it echoes: stderr.ts.)

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
