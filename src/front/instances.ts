import { isAbsolute, resolve } from 'node:path';
import { INSTANCE_TAG } from '../store/index.js';

// What `olp front` is told about the instances behind the door, checked before anything is written:
// every value here ends up in an nginx or Prometheus file, so each is held to a shape that cannot
// break out of its place there.

/** A mistake in what `olp front` was given or found; the CLI prints its message as one line. */
export class FrontError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FrontError';
  }
}

/** An olp instance behind the door. */
export interface Instance {
  tag: string;
  /** `http://host:port`, as the door and Prometheus reach it. */
  origin: string;
  /** `host:port` for nginx's `server` line and Prometheus' target. */
  address: string;
}

/** An `--instance` as given: the tag is known (`TAG=URL`) or to be asked of the instance (a bare URL). */
export interface InstanceSpec {
  tag: string | undefined;
  origin: string;
  address: string;
}

const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])$/;

/** Checks a tag, naming where it came from when it is not one. */
export function parseTag(raw: string, where: string): string {
  if (!INSTANCE_TAG.test(raw)) throw new FrontError(`${where}: '${raw}' is not an instance tag (1-16 of a-z and 0-9)`);
  return raw;
}

/** `URL` or `TAG=URL`. The URL is olp's own (`http://host:port`, as `olp serve` prints it, /v1 allowed). */
export function parseInstanceSpec(raw: string): InstanceSpec {
  const eq = raw.indexOf('=');
  const colon = raw.indexOf(':');
  const tagged = eq > 0 && (colon < 0 || eq < colon);
  const tag = tagged ? parseTag(raw.slice(0, eq), `--instance ${raw}`) : undefined;
  const text = tagged ? raw.slice(eq + 1) : raw;
  let url: URL;
  try {
    if (!text.includes('://')) throw new TypeError('no scheme');
    url = new URL(text);
  } catch {
    throw new FrontError(`--instance ${raw}: '${text}' is not a URL (http://HOST:PORT, or TAG=http://HOST:PORT)`);
  }
  const bad = (why: string) => new FrontError(`--instance ${raw}: ${why}`);
  // olp serves plain HTTP; the door is where TLS ends.
  if (url.protocol !== 'http:') throw bad(`olp answers on http://, not ${url.protocol}//`);
  if (url.username || url.password)
    throw bad('a URL with a user or password in it (keys come only from OLP_OWNER_KEYS)');
  if (url.search || url.hash) throw bad('a URL with a query or fragment');
  if (!/^\/(?:v1\/?)?$/.test(url.pathname))
    throw bad(`the path '${url.pathname}' (give olp's own address: http://HOST:PORT)`);
  if (!HOST.test(url.hostname)) throw bad(`'${url.hostname}' is not a host name or address`);
  // nginx makes a name that resolves to several addresses several servers, tried in turn with no
  // retry here: localhost (::1 and 127.0.0.1) would fail every other request on an olp that listens
  // on 127.0.0.1, its default.
  const host = url.hostname === 'localhost' ? '127.0.0.1' : url.hostname;
  const address = `${host}:${url.port || '80'}`;
  return { tag, origin: `http://${address}`, address };
}

/** Two instances with one tag (or one address twice) would make routing ambiguous. */
export function checkDistinct(instances: readonly Instance[]): void {
  const seen = new Map<string, Instance>();
  for (const i of instances) {
    const other = seen.get(i.tag);
    if (other)
      throw new FrontError(
        `two instances have the tag '${i.tag}': ${other.origin} and ${i.origin} (give each its own)`,
      );
    seen.set(i.tag, i);
  }
  const origins = new Set<string>();
  for (const i of instances) {
    if (origins.has(i.origin)) throw new FrontError(`${i.origin} is given twice`);
    origins.add(i.origin);
  }
}

/**
 * `--listen`: `host:port`, `[v6]:port` or a port alone (which keeps 127.0.0.1, as olp's own
 * `--host` does: 0.0.0.0:PORT is the LAN, said on purpose).
 */
export function parseListen(raw: string): string {
  const m = /^(?:(.+):)?(\d{1,5})$/.exec(raw);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port < 1 || port > 65535 || (m[1] !== undefined && !(HOST.test(m[1]) || m[1] === '*')))
    throw new FrontError(`--listen ${raw}: expected HOST:PORT, [IPv6]:PORT or PORT (e.g. 0.0.0.0:8080)`);
  return `${m[1] ?? '127.0.0.1'}:${port}`;
}

/** A file the config names (a TLS certificate or key, a credentials directory): absolute, and quotable. */
export function parsePath(raw: string, flag: string, cwd: string): string {
  if (raw === '' || /["\\$;{}\s\u0000-\u001f\u007f]/.test(raw))
    throw new FrontError(
      `--${flag} ${JSON.stringify(raw)}: a path without quotes, backslashes, $, ;, braces or spaces`,
    );
  return isAbsolute(raw) ? raw : resolve(cwd, raw);
}

/** `--server-name`: names as nginx's `server_name` takes them (one or more, space-separated). */
export function parseServerName(raw: string): string {
  const names = raw.trim().split(/\s+/);
  if (raw.trim() === '' || !names.every((n) => /^[A-Za-z0-9*.-]{1,253}$/.test(n)))
    throw new FrontError(`--server-name ${JSON.stringify(raw)}: host names (letters, digits, . - and *)`);
  return names.join(' ');
}
