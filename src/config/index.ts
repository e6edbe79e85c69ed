import { join, resolve } from 'node:path';
import type { z } from 'zod';
import { type Config, type ConfigKey, type Field, FIELDS } from './fields.js';
import { readConfigFile } from './file.js';
import { commaItems, fromString } from './from-string.js';

export { FIELDS, type Config, type ConfigKey } from './fields.js';
export { updateConfigFile } from './file.js';

/** Where a configuration value came from; named in every validation error. */
type Source = 'flag' | 'env' | 'file' | 'default';

/** Raised when any source holds a bad value; the message lists each problem with its source. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

function label(key: ConfigKey, source: Source, file: string): string {
  const f: Field = FIELDS[key];
  if (source === 'flag') return `flag --${f.flag}`;
  if (source === 'env') return `env ${f.env}`;
  if (source === 'file') return `${file}: ${key}`;
  return `default ${key}`;
}

export interface ConfigInputs {
  /** Values from parsed flags; strings, or string arrays for repeatable list flags. */
  flags?: Partial<Record<ConfigKey, string | string[]>>;
  env?: Readonly<Record<string, string | undefined>>;
  /** Read `<stateDir>/config.json` when it exists (default true). */
  readFile?: boolean;
  /** Values that override everything (used by tests and embedders). */
  overrides?: Partial<Record<ConfigKey, unknown>>;
}

/** Builds the frozen configuration from flags > env > config file > defaults, validating each value once. */
export function parseConfig(inputs: ConfigInputs = {}): Config {
  const env = inputs.env ?? {};
  const problems: string[] = [];
  const chosen = new Map<ConfigKey, { value: unknown; source: Source }>();
  const keys = Object.keys(FIELDS) as ConfigKey[];

  for (const key of keys) {
    const f: Field = FIELDS[key];
    const flag = inputs.flags?.[key];
    if (flag !== undefined) {
      const parts = Array.isArray(flag) ? flag : [flag];
      if (f.kind === 'list') {
        const items = f.commas === false ? parts.map((p) => p.trim()).filter(Boolean) : parts.flatMap(commaItems);
        chosen.set(key, { value: items, source: 'flag' });
      } else {
        const r = fromString(f, parts[parts.length - 1] ?? '');
        if (r.ok) chosen.set(key, { value: r.value, source: 'flag' });
        else problems.push(`${label(key, 'flag', '')}: ${r.message}`);
      }
      continue;
    }
    const raw = f.env ? env[f.env] : undefined;
    if (raw !== undefined && raw !== '') {
      const r = fromString(f, raw);
      if (r.ok) chosen.set(key, { value: r.value, source: 'env' });
      else problems.push(`${label(key, 'env', '')}: ${r.message}`);
    }
  }
  for (const [key, value] of Object.entries(inputs.overrides ?? {}))
    chosen.set(key as ConfigKey, { value, source: 'flag' });

  // The state dir decides where the config file lives, so it is settled first.
  const stateDirRaw = chosen.get('stateDir')?.value;
  const stateDir = resolve(
    typeof stateDirRaw === 'string' && stateDirRaw !== ''
      ? stateDirRaw
      : (FIELDS.stateDir.schema.parse(undefined) as string),
  );
  const file = join(stateDir, 'config.json');
  if (inputs.readFile !== false) {
    const fromFile = readConfigFile(file, problems);
    for (const [key, value] of Object.entries(fromFile)) {
      if (!(key in FIELDS)) {
        problems.push(`${file}: unknown setting '${key}' (known: ${keys.join(', ')})`);
        continue;
      }
      if (key === 'stateDir') {
        problems.push(`${file}: stateDir cannot be set inside the state directory; use --state-dir or OLP_STATE_DIR`);
        continue;
      }
      if (!chosen.has(key as ConfigKey)) chosen.set(key as ConfigKey, { value, source: 'file' });
    }
  }

  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const c = chosen.get(key);
    const source: Source = c?.source ?? 'default';
    const r = (FIELDS[key].schema as z.ZodType).safeParse(key === 'stateDir' ? stateDir : c?.value);
    if (r.success) out[key] = r.data;
    else for (const issue of r.error.issues) problems.push(`${label(key, source, file)}: ${issue.message}`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(out) as Config;
}
