import type { Field } from './field.js';

// A setting's value from the string a flag or an environment variable gives.

type Parsed = { ok: true; value: unknown } | { ok: false; message: string };

/** A comma-separated string's items, trimmed, the empty ones left out. */
export function commaItems(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** A list setting's items from one string: comma-separated, or whole (a JSON array for several). */
function toList(f: Field, raw: string): Parsed {
  if (f.commas !== false) return { ok: true, value: commaItems(raw) };
  if (!raw.trim().startsWith('[')) return { ok: true, value: [raw.trim()] };
  try {
    return { ok: true, value: JSON.parse(raw) };
  } catch {
    return { ok: false, message: 'expected a JSON array of strings' };
  }
}

/** Turns a string from argv or the environment into the field's kind, or explains why not. */
export function fromString(f: Field, raw: string): Parsed {
  const kind = f.kind;
  switch (kind) {
    case 'string':
      return { ok: true, value: raw };
    case 'int':
      return /^-?\d+$/.test(raw.trim())
        ? { ok: true, value: Number(raw.trim()) }
        : { ok: false, message: `expected an integer, got '${raw}'` };
    case 'bool':
      if (/^(1|true|yes|on)$/i.test(raw)) return { ok: true, value: true };
      if (/^(0|false|no|off)$/i.test(raw)) return { ok: true, value: false };
      return { ok: false, message: `expected true or false, got '${raw}'` };
    case 'list':
      return toList(f, raw);
    case 'record':
      try {
        return { ok: true, value: JSON.parse(raw) };
      } catch {
        return { ok: false, message: 'expected a JSON object' };
      }
  }
}
