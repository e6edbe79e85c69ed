// The names of logins: the machine's own, and what a new one may be called.

/** The name `olp logins` and `olp keys --login` use for the machine's own CLI logins (a key with no login). */
export const MACHINE_LOGIN = 'machine';

/** Login names: a letter or digit, then up to 31 letters, digits, '.', '_' or '-'. */
const LOGIN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$/;

/** A login name a command line may create or name; throws with the rule otherwise. */
export function checkLoginName(name: string): string {
  if (!LOGIN_NAME.test(name))
    throw new Error(`invalid login name '${name}': use 1-32 letters, digits, '.', '_' or '-'`);
  if (name === MACHINE_LOGIN) throw new Error(`'${MACHINE_LOGIN}' is the machine's own login; pick another name`);
  return name;
}
