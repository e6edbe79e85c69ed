import { backendFailed, backendNotInstalled, contextLengthExceeded, type ProxyError } from '../errors/index.js';
import type { ExitInfo } from '../process/index.js';
import type { EnvPolicy } from './types.js';

/**
 * A key's login is the only credential its runs get: the operator's provider keys (`--*-env`,
 * `--*-pass-env`) are left out of a login's runs, so no run mixes two people's credentials.
 */
export function withoutApiKeys<T extends Readonly<Record<string, string>> | readonly string[]>(
  vars: T,
  apiKeyVars: readonly string[],
): T {
  if (Array.isArray(vars)) return vars.filter((n) => !apiKeyVars.includes(n)) as unknown as T;
  return Object.fromEntries(Object.entries(vars).filter(([n]) => !apiKeyVars.includes(n))) as T;
}

/**
 * The environment rules every backend follows: what it sets always passes; a provider key passes
 * only when the operator names it; `neverPass` (nested-session markers, the CLI's own home) never does.
 */
export function toEnvPolicy(
  set: Readonly<Record<string, string>>,
  pass: readonly string[],
  apiKeyVars: readonly string[],
  neverPass: (name: string) => boolean,
): EnvPolicy {
  const named = new Set(pass);
  return {
    set,
    pass,
    deny(name) {
      if (name in set) return false;
      if (apiKeyVars.includes(name)) return !named.has(name);
      return neverPass(name);
    },
  };
}

/**
 * The provider (through the CLI) refused the prompt as longer than the model takes: one clear
 * message, with the provider's count when its text has one ("… 201234 tokens > 200000 maximum");
 * the CLI's own wording (claude's advice about compacting and files) stays in `cause` only.
 */
export function providerContextError(backend: string, text: string): ProxyError {
  const m = /(\d[\d,]*)\s*tokens?\s*>\s*(\d[\d,]*)/i.exec(text);
  const count = m ? ` (about ${m[1]!.replace(/,/g, '')} tokens against its limit of ${m[2]!.replace(/,/g, '')})` : '';
  return contextLengthExceeded(
    `the model provider refused the prompt ${backend} sent as longer than the model's context${count}; ` +
      'start a new conversation, or send less of this one',
    new Error(text),
  );
}

/** One line of text for an error message: whitespace collapsed, cut at `max` characters. */
export function clip(text: string, max = 300): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max)}…` : t;
}

/** Errors from starting a CLI at all: missing (ENOENT), not executable (EACCES), anything else. */
export function toSpawnFailure(backend: string, bin: string, installFix: string, exit: ExitInfo): ProxyError {
  const code = exit.spawnError?.code;
  if (code === 'ENOENT') return backendNotInstalled(backend, bin, installFix, exit.spawnError);
  if (code === 'EACCES')
    return backendNotInstalled(backend, bin, `The file is not executable. ${installFix}`, exit.spawnError);
  return backendFailed(
    backend,
    `could not start '${bin}': ${exit.spawnError?.message ?? 'unknown error'}`,
    exit.spawnError,
  );
}

/** Counts a CLI's stdout lines: JSON objects are parsed, anything else is remembered for the error message. */
export function createLineReader<T extends object>() {
  let parsed = 0;
  let unparsed = 0;
  let firstUnparsed: string | undefined;
  return {
    /** The line as an object, or undefined (counted) when it is not a JSON object. */
    read(raw: string): T | undefined {
      try {
        const line = JSON.parse(raw) as unknown;
        if (line !== null && typeof line === 'object') {
          parsed++;
          return line as T;
        }
      } catch {
        // counted below
      }
      unparsed++;
      firstUnparsed ??= raw;
      return undefined;
    },
    /** Line counts for error decisions. */
    summary(): { parsedLines: number; unparsedLines: number; firstUnparsed?: string } {
      return {
        parsedLines: parsed,
        unparsedLines: unparsed,
        ...(firstUnparsed !== undefined ? { firstUnparsed } : {}),
      };
    },
  };
}
