import type { ConnectDeps, MemberCaller } from '../logins/index.js';
import type { Plans } from '../plan/index.js';
import type { LoginCli, LoginRecord, Store } from '../store/index.js';

// GET /olp/me/login's body: the caller's login as the page shows it (kinds, refusals, plan windows,
// the device sign-in), whether the caller may change it, and never a secret.

/** What the /olp/me/login routes need: the policy, what connecting needs (its log aside), which CLIs are installed. */
export interface MemberLoginsDeps {
  policy: 'required' | 'preferred' | 'off';
  connect: Omit<ConnectDeps, 'onAction'>;
  installed(cli: LoginCli): boolean;
}

/** Whether the caller may change its login, and if not what to do (null when it may). */
export function whyNotChange(store: Store, policy: MemberLoginsDeps['policy'], caller: MemberCaller): string | null {
  if (caller.role === 'owner') return null;
  if (policy === 'off')
    return 'Members cannot connect their own login on this olp server: ask its owner to set one up for your key.';
  if (caller.login !== null && store.logins.keysOf(caller.login).some((k) => k !== caller.name))
    return `Your key shares the login '${caller.login}' with other keys: ask the owner of this olp server to change it.`;
  return null;
}

function cliView(row: LoginRecord | undefined, cli: LoginCli, plan: unknown) {
  const kind = row?.[cli];
  if (!kind) return null;
  return { kind, refused: row.refused[cli], plan: plan ?? null };
}

/** The body of GET /olp/me/login (and of every change's answer). */
export function toMyLoginView(m: MemberLoginsDeps, plans: Plans | undefined, caller: MemberCaller) {
  const { store } = m.connect;
  const name = caller.login;
  const whyNot = whyNotChange(store, m.policy, caller);
  const planOf = plans?.view(name) ?? {};
  let login = null;
  if (name !== null) {
    const keys = store.logins.keysOf(name);
    const row = store.logins.get(name);
    login = {
      name,
      keys,
      shared: keys.some((k) => k !== caller.name),
      claude: cliView(row, 'claude', planOf.claude),
      codex: cliView(row, 'codex', planOf.codex),
    };
  }
  return {
    key: caller.name,
    role: caller.role,
    policy: m.policy,
    banner: m.policy === 'preferred' && caller.role === 'member' && name === null,
    canChange: whyNot === null,
    whyNot,
    login,
    clis: { claude: { installed: m.installed('claude') }, codex: { installed: m.installed('codex') } },
    device: m.connect.devices.find(name, caller.keyId) ?? null,
  };
}
