import { invalidApiKey, missingApiKey } from '../errors/index.js';
import type { KeyStore, Role } from '../store/index.js';

/** Who is asking. Handlers see this, never the raw token. */
export interface Principal {
  keyId: string;
  name: string;
  role: Role;
}

/** Resolves an `Authorization: Bearer <token>` header to a principal, or throws a 401. */
export function authenticate(header: string | undefined, keys: KeyStore): Principal {
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!match) throw missingApiKey();
  const key = keys.authenticate(match[1]!);
  if (!key) throw invalidApiKey();
  return { keyId: key.id, name: key.name, role: key.role };
}
