import { FIELDS, type ConfigKey } from '../config/index.js';

// The option lines of a command's help, made from the one table of settings.

const METAVAR: Partial<Record<ConfigKey, string>> = {
  host: 'ADDR',
  stateDir: 'DIR',
  claudeBin: 'PATH',
  codexBin: 'PATH',
  claudeCredentials: 'FILE',
  codexAuth: 'FILE',
  codexConfig: 'KEY=VALUE',
  logLevel: 'LEVEL',
  logFormat: 'text|json',
  contextOverflow: 'refuse|trim',
  memberLogins: 'required|preferred|off',
  recordMode: 'MODE',
  recordFile: 'ID|PATH',
  alertWebhook: 'URL',
  alertFormat: 'json|ntfy|slack|discord',
  alertBudgetThresholds: 'PERCENTS',
  alertPlanThresholds: 'PERCENTS',
};
const KIND_METAVAR = { int: 'N', list: 'LIST', bool: 'true|false', string: 'VALUE', record: 'JSON' } as const;

export const HELP_ROW = ['-h, --help', 'show this help'] as const;
export const DEBUG_ROW = ['--log-level debug', 'also print the stack trace of an error'] as const;

/** `  --flag VALUE   description [OLP_ENV]`, one per setting, from the one table of settings, then any extra rows. */
export function toOptionLines(keys: readonly ConfigKey[], extra: readonly (readonly [string, string])[] = []): string {
  const rows = keys.map((key) => {
    const f: { flag?: string; env?: string; kind: keyof typeof KIND_METAVAR; description: string } = FIELDS[key];
    const left = f.flag ? `--${f.flag} ${METAVAR[key] ?? KIND_METAVAR[f.kind]}` : (f.env ?? key);
    return [left, `${f.description}${f.flag && f.env ? ` [${f.env}]` : ''}`] as const;
  });
  const all = [...rows, ...extra];
  const width = Math.max(...all.map(([l]) => l.length));
  return all.map(([l, r]) => `  ${l.padEnd(width)}  ${r}`).join('\n');
}
