/** Host variables every CLI child gets when the daemon has them: locale, terminal, PATH, proxies, CA bundles. */
export const BASE_ENV = [
  'PATH',
  'USER',
  'LOGNAME',
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'LC_CTYPE',
  'LC_MESSAGES',
  'TZ',
  'TERM',
  'NO_COLOR',
  'HTTPS_PROXY',
  'HTTP_PROXY',
  'NO_PROXY',
  'https_proxy',
  'http_proxy',
  'no_proxy',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'NODE_EXTRA_CA_CERTS',
] as const;

export interface ChildEnvPolicy {
  set: Readonly<Record<string, string>>;
  pass: readonly string[];
  deny(name: string): boolean;
}

/**
 * A child's whole environment: an allowlist of the host's variables plus what the backend sets,
 * with HOME pointing at the workspace. Nothing else of the daemon's environment is copied.
 */
export function toChildEnv(
  host: Readonly<Record<string, string | undefined>>,
  policy: ChildEnvPolicy,
  home: string,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of [...BASE_ENV, ...policy.pass]) {
    const value = host[name];
    if (value !== undefined && !policy.deny(name)) env[name] = value;
  }
  for (const [name, value] of Object.entries(policy.set)) if (!policy.deny(name)) env[name] = value;
  env.HOME = home;
  return env;
}
