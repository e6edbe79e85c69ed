// codex sends an output schema to the Responses API with `strict: true` as it is (0.171 checks
// only that it is JSON), and strict mode refuses a schema unless every object lists all its
// properties as required and forbids others. A client's ordinary schema is rewritten to that
// form: additionalProperties false everywhere, and a property that was optional becomes
// required but nullable, so the model may still leave it out by answering null.

type Schema = Record<string, unknown>;

const isSchema = (v: unknown): v is Schema => !!v && typeof v === 'object' && !Array.isArray(v);

/** The schema in the strict form (a schema already strict comes back the same). */
export function toStrictSchema(schema: Schema): Schema {
  return strict(schema);
}

function strict(node: Schema): Schema {
  const out: Schema = { ...node };
  const props = isSchema(node.properties) ? node.properties : undefined;
  if (props || node.type === 'object' || (Array.isArray(node.type) && node.type.includes('object'))) {
    const required = new Set(
      Array.isArray(node.required)
        ? (node.required as unknown[]).filter((r): r is string => typeof r === 'string')
        : [],
    );
    const entries = Object.entries(props ?? {}).map(
      ([k, v]) => [k, isSchema(v) ? (required.has(k) ? strict(v) : nullable(strict(v))) : v] as const,
    );
    out.properties = Object.fromEntries(entries);
    out.required = entries.map(([k]) => k);
    out.additionalProperties = false;
  }
  if (isSchema(node.items)) out.items = strict(node.items);
  for (const key of ['anyOf', 'allOf', 'oneOf', 'prefixItems']) {
    const list = node[key];
    if (Array.isArray(list)) out[key] = list.map((s) => (isSchema(s) ? strict(s) : s));
  }
  // strict mode knows anyOf, not oneOf: for a reply, "one of" these shapes reads the same.
  if (Array.isArray(out.oneOf) && !out.anyOf) {
    out.anyOf = out.oneOf;
    delete out.oneOf;
  }
  for (const key of ['$defs', 'definitions']) {
    const defs = node[key];
    if (isSchema(defs))
      out[key] = Object.fromEntries(Object.entries(defs).map(([k, s]) => [k, isSchema(s) ? strict(s) : s]));
  }
  return out;
}

function nullable(s: Schema): Schema {
  if (typeof s.type === 'string')
    return s.type === 'null'
      ? s
      : {
          ...s,
          type: [s.type, 'null'],
          ...(Array.isArray(s.enum) && !s.enum.includes(null) ? { enum: [...s.enum, null] } : {}),
        };
  if (Array.isArray(s.type)) return s.type.includes('null') ? s : { ...s, type: [...s.type, 'null'] };
  if (Array.isArray(s.anyOf))
    return (s.anyOf as unknown[]).some((x) => isSchema(x) && x.type === 'null')
      ? s
      : { ...s, anyOf: [...s.anyOf, { type: 'null' }] };
  return { anyOf: [s, { type: 'null' }] };
}

/** Whether a schema itself allows null. */
function allowsNull(s: Schema): boolean {
  if (s.type === 'null' || (Array.isArray(s.type) && s.type.includes('null'))) return true;
  if (Array.isArray(s.enum) && s.enum.includes(null)) return true;
  return ['anyOf', 'oneOf'].some(
    (k) => Array.isArray(s[k]) && (s[k] as unknown[]).some((x) => isSchema(x) && allowsNull(x)),
  );
}

/**
 * A reply to the strict form, made to fit the client's own schema again: a property that was
 * optional (and not nullable) there, and came back null, is left out, all the way down.
 */
export function withoutAddedNulls(value: unknown, schema: Schema): unknown {
  if (Array.isArray(value))
    return isSchema(schema.items) ? value.map((v) => withoutAddedNulls(v, schema.items as Schema)) : value;
  if (!value || typeof value !== 'object' || !isSchema(schema.properties)) return value;
  const props = schema.properties;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const p = props[k];
    if (v === null && !required.has(k) && isSchema(p) && !allowsNull(p)) continue;
    out[k] = isSchema(p) ? withoutAddedNulls(v, p) : v;
  }
  return out;
}
