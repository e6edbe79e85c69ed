import type { z } from 'zod';
import { ALERT_FIELDS } from './fields-alerts.js';
import { CAPACITY_FIELDS } from './fields-capacity.js';
import { PLACE_FIELDS } from './fields-place.js';
import { REQUEST_FIELDS } from './fields-request.js';

export type { Field } from './field.js';

/** Every setting olp reads, with its flag, env name and schema. docs/configuration.md's table mirrors this. */
export const FIELDS = { ...PLACE_FIELDS, ...REQUEST_FIELDS, ...CAPACITY_FIELDS, ...ALERT_FIELDS };

export type ConfigKey = keyof typeof FIELDS;

/** A parsed value as the frozen config holds it: its arrays and its records' arrays read-only. */
type Frozen<T> = T extends readonly (infer U)[]
  ? readonly U[]
  : T extends object
    ? Readonly<{ [K in keyof T]: T[K] extends readonly (infer V)[] ? readonly V[] : T[K] }>
    : T;

/** The validated settings, one per field of `FIELDS`, typed by that field's schema. */
export type Config = Readonly<{ [K in ConfigKey]: Frozen<z.output<(typeof FIELDS)[K]['schema']>> }>;
