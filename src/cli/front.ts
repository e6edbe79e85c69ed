import {
  checkDistinct,
  FrontError,
  parseInstanceSpec,
  parseListen,
  parseOwnerKeys,
  parsePath,
  parseServerName,
  parseTag,
  resolveInstances,
  toNginxConfig,
  toPrometheusConfig,
  type Instance,
} from '../front/index.js';
import { parseCommandLine } from './args.js';
import { UsageError } from './usage-error.js';
import type { Io } from './store-command.js';

export const FRONT_HELP = `Usage: olp front nginx|prometheus --instance [TAG=]URL... [options]

One olp per machine (or per login), each with its own instance tag, behind one standard reverse
proxy: the front door. Keys minted on a tagged instance read olpk_<tag>_..., and the door sends each
request to the instance whose tag is in its key. It prints a config on stdout; nothing in it is secret.

Commands:
  olp front nginx --instance [TAG=]URL... [--listen ADDR] [--tls-cert FILE --tls-key FILE]
        the nginx config of the door (run it as any user: nginx -p DIR/ -c nginx.conf)
  olp front prometheus --instance [TAG=]URL... [--credentials-dir DIR]
        Prometheus scrape jobs for each instance's own /metrics

Options:
  --instance TAG=URL      an instance and its tag (repeat for each; the first takes requests without a key)
  --instance URL          an instance whose tag is asked of it (GET /health with an owner key of it:
                          put one key per instance, space-separated, in OLP_OWNER_KEYS)
  --listen ADDR           where the door listens: HOST:PORT, or PORT on 127.0.0.1 (default 127.0.0.1:8080;
                          0.0.0.0:8080 for the LAN)
  --tls-cert FILE         serve HTTPS with this certificate (PEM) ...
  --tls-key FILE          ... and this key (both or neither)
  --untagged TAG          send keys without a tag (olpk_ and 43 characters) to this instance; without it
                          they get a 401 saying to rotate them on their instance
  --server-name NAME      nginx server_name (optional)
  --credentials-dir DIR   prometheus: where each instance's owner key file <tag>.key is
                          (default /etc/prometheus/olp)
  -h, --help              show this help

Example:
  olp front nginx --instance a1=http://10.0.0.2:8787 --instance b2=http://10.0.0.3:8787 \\
    --listen 0.0.0.0:8080 > ~/olp-front/nginx.conf
  nginx -p ~/olp-front/ -c nginx.conf
`;

export const FRONT_FLAGS = {
  instance: { type: 'string', multiple: true },
  listen: { type: 'string' },
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  untagged: { type: 'string' },
  'server-name': { type: 'string' },
  'credentials-dir': { type: 'string' },
} as const;

const NGINX_ONLY = ['listen', 'tls-cert', 'tls-key', 'untagged', 'server-name'] as const;

/** `olp front nginx|prometheus`: the config on stdout; a mistake in what was given or found is one line and exit 1. */
export async function runFront(argv: string[], io: Io, generator: string, cwd = process.cwd()): Promise<number> {
  const { values, positionals, help } = parseCommandLine(argv, FRONT_FLAGS);
  const [sub, ...rest] = positionals;
  if (help || sub === undefined) {
    io.stdout.write(FRONT_HELP);
    return 0;
  }
  if (sub !== 'nginx' && sub !== 'prometheus')
    throw new UsageError(`unknown front command '${sub}' (nginx or prometheus)`);
  if (rest.length > 0) throw new UsageError(`unexpected argument '${rest[0]}'`);
  const given = (values.instance as string[] | undefined) ?? [];
  if (given.length === 0) throw new UsageError('give at least one --instance TAG=URL (or --instance URL)');
  const str = (k: string) => values[k] as string | undefined;
  if (sub === 'prometheus') {
    const misplaced = NGINX_ONLY.find((k) => values[k] !== undefined);
    if (misplaced) throw new UsageError(`--${misplaced} is for olp front nginx`);
  } else if (values['credentials-dir'] !== undefined)
    throw new UsageError('--credentials-dir is for olp front prometheus');
  try {
    const instances = await toInstances(given, io.env.OLP_OWNER_KEYS);
    if (sub === 'prometheus') {
      const credentialsDir = parsePath(str('credentials-dir') ?? '/etc/prometheus/olp', 'credentials-dir', cwd);
      io.stdout.write(toPrometheusConfig({ instances, credentialsDir, generator }));
      return 0;
    }
    io.stdout.write(toNginxConfig({ instances, generator, ...nginxOptions(str, instances, cwd) }));
    return 0;
  } catch (err) {
    if (!(err instanceof FrontError)) throw err;
    io.stderr.write(`olp front: ${err.message}\n`);
    return 1;
  }
}

async function toInstances(given: string[], ownerKeys: string | undefined): Promise<Instance[]> {
  const specs = given.map(parseInstanceSpec);
  // Everything that needs no network is checked before any instance is asked.
  checkDistinct(specs.map((s, i) => ({ tag: s.tag ?? `?${i}`, origin: s.origin, address: s.address })));
  const instances = await resolveInstances(specs, parseOwnerKeys(ownerKeys));
  checkDistinct(instances);
  return instances;
}

function nginxOptions(str: (k: string) => string | undefined, instances: readonly Instance[], cwd: string) {
  const cert = str('tls-cert');
  const key = str('tls-key');
  if ((cert === undefined) !== (key === undefined))
    throw new FrontError('--tls-cert and --tls-key go together (give both or neither)');
  const untaggedRaw = str('untagged');
  const untagged = untaggedRaw === undefined ? undefined : parseTag(untaggedRaw, '--untagged');
  if (untagged !== undefined && !instances.some((i) => i.tag === untagged))
    throw new FrontError(
      `--untagged ${untagged}: no --instance has that tag (${instances.map((i) => i.tag).join(', ')})`,
    );
  const serverName = str('server-name');
  return {
    listen: parseListen(str('listen') ?? '127.0.0.1:8080'),
    tls: cert && key ? { cert: parsePath(cert, 'tls-cert', cwd), key: parsePath(key, 'tls-key', cwd) } : undefined,
    untagged,
    serverName: serverName === undefined ? undefined : parseServerName(serverName),
  };
}
