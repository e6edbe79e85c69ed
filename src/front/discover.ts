import { FrontError, parseTag, type Instance, type InstanceSpec } from './instances.js';

// A bare `--instance URL` is asked for its tag: GET /health with an owner key shows `instance.tag`.
// The keys come only from the environment (OLP_OWNER_KEYS), are sent only as a header to the instance
// being asked, and are never part of a message.

type Fetch = (url: string, init: RequestInit) => Promise<Response>;

/** How long one instance gets to answer /health. */
const ASK_MS = 5000;

/** The tags of the instances given as bare URLs, asked of each; `TAG=URL` ones are used as given. */
export async function resolveInstances(
  specs: readonly InstanceSpec[],
  ownerKeys: readonly string[],
  fetchFn: Fetch = fetch,
): Promise<Instance[]> {
  // A key that one instance took as its owner's belongs to it: the next instance is not sent it.
  const unused = [...ownerKeys];
  const out: Instance[] = [];
  for (const spec of specs) {
    if (spec.tag !== undefined) {
      out.push({ tag: spec.tag, origin: spec.origin, address: spec.address });
      continue;
    }
    const { tag, key } = await askTag(spec.origin, unused, fetchFn);
    unused.splice(unused.indexOf(key), 1);
    out.push({ tag, origin: spec.origin, address: spec.address });
  }
  return out;
}

/** The key set in OLP_OWNER_KEYS: whitespace-separated. */
export function parseOwnerKeys(raw: string | undefined): string[] {
  return (raw ?? '').split(/\s+/).filter((k) => k !== '');
}

async function askTag(origin: string, keys: readonly string[], fetchFn: Fetch): Promise<{ tag: string; key: string }> {
  if (keys.length === 0)
    throw new FrontError(
      `--instance ${origin}: to ask it for its tag, put an owner key of it in OLP_OWNER_KEYS ` +
        `(or give --instance TAG=${origin})`,
    );
  for (const key of keys) {
    const view = await askHealth(origin, key, fetchFn);
    if (view === undefined) continue;
    const instance = view.instance as { tag?: unknown } | undefined;
    if (instance === undefined)
      throw new FrontError(
        `${origin} does not say its instance tag: it runs an olp from before instance tags (upgrade it)`,
      );
    if (instance.tag === null || instance.tag === undefined || instance.tag === '')
      throw new FrontError(
        `${origin} has no instance tag: set \`instanceTag\` there: ` +
          '`olp serve --instance-tag a1` or in its config.json',
      );
    return { tag: parseTag(String(instance.tag), `${origin} says its tag is`), key };
  }
  throw new FrontError(`${origin} took none of the ${keys.length} key(s) in OLP_OWNER_KEYS as an owner key`);
}

/**
 * The owner view of an instance's /health, or undefined when this key does not get it (not this
 * instance's, or not an owner's); a FrontError when the instance cannot be reached or is no olp.
 */
export async function askHealth(
  origin: string,
  key: string,
  fetchFn: Fetch = fetch,
): Promise<Record<string, unknown> | undefined> {
  let res: Response;
  try {
    res = await fetchFn(`${origin}/health`, {
      headers: { authorization: `Bearer ${key}` },
      redirect: 'error', // a redirect would carry the key elsewhere
      signal: AbortSignal.timeout(ASK_MS),
    });
  } catch (err) {
    throw new FrontError(`cannot reach ${origin}/health (${reason(err)})`);
  }
  // Not a key of this instance (421: another instance's, by its tag), or not an owner's.
  if (res.status === 401 || res.status === 403 || res.status === 421) {
    await res.body?.cancel();
    return undefined;
  }
  const text = await res.text().catch(() => '');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  // /health answers 503 while the instance drains, with the same owner view.
  if ((res.status !== 200 && res.status !== 503) || typeof body !== 'object' || body === null || !('status' in body))
    throw new FrontError(`${origin}/health did not answer as olp does (HTTP ${res.status})`);
  return 'backends' in body ? (body as Record<string, unknown>) : undefined;
}

function reason(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError') return `no answer in ${ASK_MS / 1000} s`;
  return e.cause?.code ?? e.cause?.message ?? e.message ?? String(err);
}
