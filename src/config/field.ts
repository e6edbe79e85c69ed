import { z } from 'zod';

/** How a setting is written in a flag or an environment variable. */
export type Kind = 'string' | 'int' | 'list' | 'record' | 'bool';

/** One setting: its kind, schema, flag, env name and what it does. */
export interface Field {
  kind: Kind;
  /**
   * For lists: whether a comma separates items. Not where a comma can be part of a value (a
   * codex `key=value` override may hold a TOML inline table); such a list takes one item per
   * flag, or a JSON array in the environment.
   */
  commas?: false;
  schema: z.ZodType;
  /** Flag name without dashes; absent for file-only fields. */
  flag?: string;
  env?: string;
  description: string;
}

/** A list of environment variable names. */
export const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected environment variable names');
