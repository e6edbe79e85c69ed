import * as crypto from 'node:crypto';

// Random bytes for the ids olp makes per request (request, completion, response, message and
// call ids), taken from a pool refilled 4 KB at a time, as Node's own randomUUID does: one
// `randomBytes` call per id was about 30 µs of a request in the profile. Not for secrets: those
// (tokens) take `randomBytes` of their own.
const pool = Buffer.allocUnsafe(4096);
let offset = pool.length;

/** `bytes` random bytes as text. */
export function randomText(bytes: number, encoding: 'hex' | 'base64url'): string {
  if (offset + bytes > pool.length) {
    crypto.randomFillSync(pool);
    offset = 0;
  }
  const text = pool.toString(encoding, offset, offset + bytes);
  offset += bytes;
  return text;
}

// crypto.hash (Node 20.12+) digests in one call without making a Hash object: about a third of
// createHash's cost, paid a few times per request (the token, the transcript's hash chain).
const oneShot = typeof crypto.hash === 'function' ? crypto.hash : undefined;

/** sha256 of a string (as UTF-8), as hex or as bytes. */
export function sha256(text: string): string;
export function sha256(text: string, encoding: 'buffer'): Buffer;
export function sha256(text: string, encoding: 'hex' | 'buffer' = 'hex'): string | Buffer {
  if (oneShot) return oneShot('sha256', text, encoding) as string | Buffer;
  const digest = crypto.createHash('sha256').update(text, 'utf8');
  return encoding === 'buffer' ? digest.digest() : digest.digest('hex');
}
