import {
  conflictingApiKeys,
  invalidApiKey,
  keyDisabled,
  keyExpired,
  missingApiKey,
  wrongInstance,
} from '../errors/index.js';
import { tokenTag, type KeyStore, type Policy, type Role } from '../store/index.js';

/** Who is asking, and what they may do. Handlers see this, never the raw token. */
export interface Principal {
  keyId: string;
  name: string;
  role: Role;
  policy: Policy;
  /** The login whose CLIs serve the key; null: the machine's own. */
  login: string | null;
}

/** Which olp instance this is, among several behind one front door (`instanceTag`, `peers`). */
export interface Instance {
  tag: string | null;
  /** The other instances' base URLs by tag. */
  peers: Readonly<Record<string, string>>;
}

/**
 * Resolves an `Authorization: Bearer <token>` header to a principal, or throws a 401/403; a key
 * unknown here whose token carries another instance's tag is a 421 naming that instance.
 */
export function authenticate(
  header: string | undefined,
  keys: KeyStore,
  instance?: Instance,
  now = Date.now(),
): Principal {
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!match) throw missingApiKey();
  const key = keys.authenticate(match[1]!);
  if (!key) {
    const tag = tokenTag(match[1]!);
    if (tag !== null && instance && tag !== instance.tag) throw wrongInstance(tag, instance.tag, instance.peers[tag]);
    throw invalidApiKey();
  }
  if (key.policy.expiresAt && Date.parse(key.policy.expiresAt) <= now) throw keyExpired(key.policy.expiresAt);
  if (!key.policy.enabled) throw keyDisabled();
  return { keyId: key.id, name: key.name, role: key.role, policy: key.policy, login: key.login };
}

/**
 * The request's key as an `Authorization` header: its own, or `x-api-key` (Anthropic's header,
 * which Claude Code and the Anthropic SDKs send) as a bearer token. Both, naming different keys: 401.
 */
export function authorizationOf(headers: {
  authorization?: string | undefined;
  'x-api-key'?: unknown;
}): string | undefined {
  const apiKey = headers['x-api-key'];
  const key = typeof apiKey === 'string' && apiKey.trim() !== '' ? apiKey.trim() : undefined;
  if (key === undefined) return headers.authorization;
  if (headers.authorization === undefined) return `Bearer ${key}`;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization)?.[1];
  if (bearer !== key) throw conflictingApiKeys();
  return headers.authorization;
}
