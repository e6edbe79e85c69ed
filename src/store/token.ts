// olp's tokens: how they are made, tagged with their instance, hashed and hinted at.
import { randomBytes } from 'node:crypto';
import { sha256 } from '../ids/index.js';

/** Every olp token starts with this, so secret scanners and people recognise a leaked one. */
export const TOKEN_PREFIX = 'olpk_';

export const KEY_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** sha256 of a token; the only form in which tokens are stored. */
export function hashToken(token: string): Buffer {
  return sha256(token, 'buffer');
}

/**
 * An olp instance's tag: minted into its keys (`olpk_<tag>_…`) so that a front door can route a
 * key to its instance on something public in the token, never on a map of secrets.
 */
export const INSTANCE_TAG = /^[a-z0-9]{1,16}$/;

/** 32 random bytes as base64url are 43 characters; only that exact length tells an untagged key. */
const TAGGED_TOKEN = /^olpk_([a-z0-9]{1,16})_[A-Za-z0-9_-]{43}$/;

/** A new token, carrying the instance's tag when it has one. */
export function createToken(tag: string | null = null): string {
  return TOKEN_PREFIX + (tag === null ? '' : `${tag}_`) + randomBytes(32).toString('base64url');
}

/** The instance tag a token carries; null for an untagged (older) key or anything else. */
export function tokenTag(token: string): string | null {
  return TAGGED_TOKEN.exec(token)?.[1] ?? null;
}

/** What `olp keys list` may show of a token: the prefix, the tag, and four characters. */
export function hintOf(token: string): string {
  const tag = tokenTag(token);
  return token.slice(0, TOKEN_PREFIX.length + (tag === null ? 0 : tag.length + 1) + 4);
}
