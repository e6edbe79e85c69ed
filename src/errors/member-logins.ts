import { createProxyError, type ProxyError } from './proxy-error.js';

// The catalogue's factories for members' own logins: the `--member-logins` policy and the
// /olp/me/login routes.

/** `--member-logins required`: a member key on the machine's login is refused; `page` is where to connect one. */
export function ownLoginRequired(page: string): ProxyError {
  return createProxyError(
    'own_login_required',
    `This olp server asks each member to use their own Claude or ChatGPT login. Connect yours on the usage ` +
      `page (${page}, "Your login" section), then try again.`,
  );
}

/** `--member-logins off`: only the owner sets logins up. */
export function memberLoginsOff(): ProxyError {
  return createProxyError(
    'member_logins_off',
    'Members cannot connect their own login on this olp server (--member-logins off). Ask its owner.',
  );
}

/** The caller's login is bound to other keys too: only an owner key changes it. */
export function loginShared(name: string, keys: readonly string[]): ProxyError {
  return createProxyError(
    'login_shared',
    `Your key uses the login '${name}', which the keys ${keys.join(', ')} share. Ask the owner of this olp ` +
      'server to change it (olp logins rotate), or to give your key a login of its own.',
  );
}

/** The CLI did not take the credential; `said` is its words, secrets masked. */
export function loginRejected(cli: string, said: string, param: string | null): ProxyError {
  return createProxyError('login_rejected', `${cli} did not accept this credential: ${said}. Nothing was stored.`, {
    param,
  });
}

/** A sign-in of this login is already under way. */
export function deviceAuthRunning(name: string): ProxyError {
  return createProxyError(
    'device_auth_running',
    `A sign-in of the login '${name}' is already under way. Finish it, or cancel it (DELETE /olp/me/login/codex/device).`,
  );
}

/** Too many sign-ins by one key. */
export function signInsRateLimited(max: number, minutes: number, retryAfter: number): ProxyError {
  return createProxyError(
    'rate_limited',
    `This key started ${max} sign-ins in the last ${minutes} minutes, its limit. Try again in ${Math.ceil(retryAfter)} s.`,
    { retryAfter: Math.max(1, Math.ceil(retryAfter)) },
  );
}

/** codex's device sign-in failed before it printed a code; `said` is its line. */
export function deviceAuthFailed(said: string): ProxyError {
  return createProxyError('device_auth_failed', `codex could not start the sign-in: ${said}`);
}

/** Something of the caller's login that is not there (a credential, a sign-in). */
export function loginPartNotFound(message: string): ProxyError {
  return createProxyError('not_found', message);
}
