// A strict reader of XML property lists (Apple's DTD, PropertyList-1.0): well-formed XML (matching
// tags, only the five named entities and numeric references, no stray '&' or '<'), one <plist
// version="1.0"> root holding one value, dicts of <key>/value pairs with unique keys, and only the
// plist element types. Anything else throws, saying where. For tests of olp's launchd agent, which
// cannot run launchd here; python3's plistlib is not on every CI machine.

export type PlistValue = string | number | boolean | PlistValue[] | { [key: string]: PlistValue };

type Token =
  | { kind: 'open' | 'close' | 'empty'; name: string; attrs: string; at: number }
  | { kind: 'text'; text: string; at: number };

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decode(raw: string, at: number): string {
  if (/[<]/.test(raw)) throw new Error(`'<' in text at ${at}`);
  return raw.replace(/&([^;\s]*);?/g, (m, name: string) => {
    if (!m.endsWith(';')) throw new Error(`an '&' that starts no reference at ${at}`);
    if (/^#\d+$/.test(name)) return String.fromCodePoint(Number(name.slice(1)));
    if (/^#x[0-9a-f]+$/i.test(name)) return String.fromCodePoint(Number.parseInt(name.slice(2), 16));
    const v = ENTITIES[name];
    if (v === undefined) throw new Error(`unknown entity &${name}; at ${at}`);
    return v;
  });
}

/** The document's elements and text, its prolog (declaration, doctype, comments) checked and dropped. */
function tokenize(xml: string): Token[] {
  if (!xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>')) throw new Error('no XML declaration first');
  const tokens: Token[] = [];
  const re =
    /<!--([\s\S]*?)-->|<!DOCTYPE[^>]*>|<\?[\s\S]*?\?>|<(\/?)([A-Za-z][\w.-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>|([^<]+)|(<)/g;
  for (let m = re.exec(xml); m; m = re.exec(xml)) {
    if (m[0].startsWith('<!--') && m[1]?.includes('--')) throw new Error(`'--' inside a comment at ${m.index}`);
    if (m[7]) throw new Error(`a '<' that starts no tag at ${m.index}`);
    if (m[6] !== undefined) tokens.push({ kind: 'text', text: decode(m[6], m.index), at: m.index });
    else if (m[3]) {
      if (m[2] && (m[5] || m[4])) throw new Error(`a malformed end tag at ${m.index}`);
      tokens.push({ kind: m[2] ? 'close' : m[5] ? 'empty' : 'open', name: m[3], attrs: m[4] ?? '', at: m.index });
    }
  }
  return tokens;
}

class Reader {
  i = 0;
  constructor(private readonly tokens: Token[]) {}

  /** The next token that is not whitespace between elements. */
  next(): Token {
    for (;;) {
      const t = this.tokens[this.i++];
      if (!t) throw new Error('the document ends too soon');
      if (t.kind === 'text' && t.text.trim() === '') continue;
      return t;
    }
  }

  /** The next token as it is, or undefined at the end. */
  raw(): Token | undefined {
    return this.tokens[this.i++];
  }

  /** Text up to the element's end tag (empty when there is none). */
  textUntil(name: string): string {
    let text = '';
    for (;;) {
      const t = this.tokens[this.i++];
      if (!t) throw new Error(`<${name}> is not closed`);
      if (t.kind === 'text') text += t.text;
      else if (t.kind === 'close' && t.name === name) return text;
      else throw new Error(`<${t.name}> inside <${name}> at ${t.at}`);
    }
  }

  value(t: Token): PlistValue {
    if (t.kind === 'text') throw new Error(`text where a value belongs at ${t.at}`);
    if (t.kind === 'close') throw new Error(`</${t.name}> where a value belongs at ${t.at}`);
    if (t.kind === 'empty') {
      if (t.name === 'true') return true;
      if (t.name === 'false') return false;
      if (t.name === 'dict') return {};
      if (t.name === 'array') return [];
      if (t.name === 'string') return '';
      throw new Error(`<${t.name}/> is not a plist value at ${t.at}`);
    }
    switch (t.name) {
      case 'string':
      case 'date':
      case 'data':
        return this.textUntil(t.name);
      case 'integer': {
        const s = this.textUntil('integer').trim();
        if (!/^[+-]?\d+$/.test(s)) throw new Error(`<integer>${s}</integer> at ${t.at}`);
        return Number(s);
      }
      case 'real': {
        const s = this.textUntil('real').trim();
        if (Number.isNaN(Number(s)) || s === '') throw new Error(`<real>${s}</real> at ${t.at}`);
        return Number(s);
      }
      case 'array':
        return this.array();
      case 'dict':
        return this.dict();
      default:
        throw new Error(`<${t.name}> is not a plist element at ${t.at}`);
    }
  }

  array(): PlistValue[] {
    const out: PlistValue[] = [];
    for (let t = this.next(); !(t.kind === 'close' && t.name === 'array'); t = this.next()) out.push(this.value(t));
    return out;
  }

  dict(): { [key: string]: PlistValue } {
    const out: { [key: string]: PlistValue } = {};
    for (let t = this.next(); !(t.kind === 'close' && t.name === 'dict'); t = this.next()) {
      if (t.kind !== 'open' || t.name !== 'key') throw new Error(`a dict entry without a <key> first at ${t.at}`);
      const k = this.textUntil('key');
      if (k in out) throw new Error(`the key ${k} twice in a dict`);
      out[k] = this.value(this.next());
    }
    return out;
  }
}

/** The value of an XML property list; throws on anything the format does not allow. */
export function parsePlist(xml: string): PlistValue {
  const r = new Reader(tokenize(xml));
  const root = r.next();
  if (root.kind !== 'open' || root.name !== 'plist' || !/^\s+version="1\.0"$/.test(root.attrs))
    throw new Error('the root is not <plist version="1.0">');
  const value = r.value(r.next());
  const end = r.next();
  if (end.kind !== 'close' || end.name !== 'plist') throw new Error('more than one value in <plist>');
  for (let t = r.raw(); t; t = r.raw())
    if (t.kind !== 'text' || t.text.trim() !== '') throw new Error('content after </plist>');
  return value;
}
