// The front door's nginx config as generated for given instances: routes on the tag of the key and holds
// no key, the TLS and untagged variants, the settings the door depends on; and nginx itself accepts it
// (nginx -t, when nginx is installed).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { toNginxConfig, type Instance } from '../../src/front/index.js';
import { checkNginxConfig, findNginx, NGINX_MISSING } from '../support/nginx.js';

const A1: Instance = { tag: 'a1', origin: 'http://10.0.0.2:8787', address: '10.0.0.2:8787' };
const B2: Instance = { tag: 'b2', origin: 'http://[::1]:4000', address: '[::1]:4000' };
const base = { instances: [A1, B2], listen: '127.0.0.1:8080', generator: 'olp 9.9.9' };
const nginx = findNginx();

/** The lines of one `map … { … }` block. */
function mapBlock(conf: string, name: string): string[] {
  const m = new RegExp(`map \\S+ \\$${name} \\{\\n([\\s\\S]*?)\\n  \\}`).exec(conf);
  assert.ok(m, `map $${name} in:\n${conf}`);
  return m[1]!.split('\n').map((l) => l.trim());
}

describe('olp front nginx: the config', () => {
  const conf = toNginxConfig(base);

  it('routes each tag to its own upstream; no key goes to the first instance; anything else to none', () => {
    assert.deepEqual(mapBlock(conf, 'olp_upstream'), [
      'a1 olp_a1;',
      'b2 olp_b2;',
      '-none olp_a1;  # no key: the usage page, GET /, /health',
      '# -untagged: no --untagged instance, so legacy keys get a 401',
      'default "";',
    ]);
    assert.match(conf, /upstream olp_a1 \{\n\s+server 10\.0\.0\.2:8787 max_fails=0;\n\s+keepalive 16;/);
    assert.match(conf, /upstream olp_b2 \{\n\s+server \[::1\]:4000 max_fails=0;/);
    assert.match(conf, /listen 127\.0\.0\.1:8080;/);
    assert.doesNotMatch(conf, /ssl/);
  });

  it('reads the tag from x-api-key first, then Authorization: Bearer, tagged keys by their length', () => {
    const xkey = mapBlock(conf, 'olp_tag');
    assert.equal(xkey[0], '"~^\\s*olpk_(?<xt>[a-z0-9]{1,16})_[A-Za-z0-9_-]{43}\\s*$" $xt;');
    assert.ok(xkey.includes('"" $olp_bearer_tag;'), 'no x-api-key: the Bearer decides');
    assert.equal(
      mapBlock(conf, 'olp_bearer_tag')[0],
      '"~^(?i:bearer)\\s+olpk_(?<bt>[a-z0-9]{1,16})_[A-Za-z0-9_-]{43}\\s*$" $bt;',
    );
    // The same patterns as regular expressions: a tagged key, a legacy key, and a legacy key that looks tagged.
    const tagged = /^\s*olpk_(?<xt>[a-z0-9]{1,16})_[A-Za-z0-9_-]{43}\s*$/;
    const body = 'A'.repeat(43);
    assert.equal(tagged.exec(`olpk_a1_${body}`)?.groups?.xt, 'a1');
    assert.equal(tagged.exec(`olpk_${body}`), null);
    assert.equal(
      tagged.exec(`olpk_a1_${'A'.repeat(40)}`),
      null,
      '43 characters after olpk_ is a legacy key whatever its shape',
    );
  });

  it('holds no key: nothing shaped like a token, only the patterns', () => {
    assert.doesNotMatch(conf, /olpk_[A-Za-z0-9_-]{20,}/);
    assert.doesNotMatch(conf, /Bearer [A-Za-z0-9]/);
  });

  it('has what an unprivileged run, large bodies, SSE and long CLI runs need', () => {
    for (const d of [
      'client_body_temp_path t_body;',
      'proxy_temp_path t_proxy;',
      'fastcgi_temp_path t_fcgi;',
      'uwsgi_temp_path t_uwsgi;',
      'scgi_temp_path t_scgi;',
      'pid nginx.pid;',
      'client_max_body_size 64m;',
      'proxy_request_buffering off;',
      'proxy_buffering off;',
      'proxy_http_version 1.1;',
      'proxy_set_header Connection "";',
      'proxy_read_timeout 3600s;',
      'proxy_next_upstream off;',
      'proxy_set_header X-Request-Id $olp_rid;',
    ])
      assert.ok(conf.includes(d), d);
    assert.match(conf, /map \$http_x_request_id \$olp_rid \{ "" \$request_id; default \$http_x_request_id; \}/);
    assert.match(conf, /log_format olp .*rid=\$olp_rid olp_rid=\$upstream_http_x_request_id tag=\$olp_tag/);
  });

  it("answers an unreachable instance with 503, Retry-After and X-Should-Retry, in each API's envelope", () => {
    const down = /location @down \{([\s\S]*?)\n {4}\}/.exec(conf)![1]!;
    assert.match(down, /add_header Retry-After 5 always;/);
    assert.match(down, /add_header X-Should-Retry true always;/);
    const [anthropic, openai] = [...down.matchAll(/return 503 '(.*)\\n';/g)].map((m) => JSON.parse(m[1]!));
    assert.equal(anthropic.type, 'error');
    assert.equal(anthropic.error.type, 'api_error');
    assert.equal(openai.error.code, 'instance_unavailable');
    assert.equal(openai.error.type, 'server_error');
  });

  it('answers an unknown or untagged key with 401 in each envelope, the message chosen from constants', () => {
    const nokey = /location @nokey \{([\s\S]*?)\n {4}\}/.exec(conf)![1]!;
    const [anthropic, openai] = [...nokey.matchAll(/return 401 '(.*)\\n';/g)].map((m) =>
      JSON.parse(m[1]!.replace('$olp_reject', 'x')),
    );
    assert.equal(anthropic.error.type, 'authentication_error');
    assert.equal(openai.error.code, 'invalid_api_key');
    const reject = mapBlock(conf, 'olp_reject');
    assert.match(reject[0]!, /^-untagged ".*rotate it on its instance.*";$/);
    assert.match(reject[1]!, /^default "not an olp key with a known instance tag/);
  });

  it('--untagged sends legacy keys and requests without a key to that instance', () => {
    const routes = mapBlock(toNginxConfig({ ...base, untagged: 'b2' }), 'olp_upstream');
    assert.ok(routes.includes('-untagged olp_b2;'));
    assert.ok(routes.includes('-none olp_b2;  # no key: the usage page, GET /, /health'));
  });

  it('TLS: listen … ssl with the absolute certificate and key paths; a server_name when given', () => {
    const tls = toNginxConfig({
      ...base,
      listen: '0.0.0.0:8443',
      tls: { cert: '/etc/olp/cert.pem', key: '/etc/olp/key.pem' },
      serverName: 'olp.lan',
    });
    assert.match(
      tls,
      /listen 0\.0\.0\.0:8443 ssl;\n\s+ssl_certificate "\/etc\/olp\/cert\.pem";\n\s+ssl_certificate_key "\/etc\/olp\/key\.pem";\n\s+ssl_protocols TLSv1\.2 TLSv1\.3;/,
    );
    assert.match(tls, /server_name olp\.lan;/);
    assert.match(tls, /# Listens on https:\/\/0\.0\.0\.0:8443/);
  });

  it('says in its header what made it, the instances and how to run it', () => {
    const head = conf
      .split('\n')
      .filter((l) => l.startsWith('#'))
      .join('\n');
    assert.match(head, /generated by `olp front nginx` \(olp 9\.9\.9\)/);
    assert.match(head, /a1 +http:\/\/10\.0\.0\.2:8787 +\(also requests without a key\)/);
    assert.match(head, /b2 +http:\/\/\[::1\]:4000/);
    assert.match(head, /nginx -p DIR\/ -c nginx\.conf/);
  });

  it('nginx -t accepts it, plain, with --untagged, and with TLS', { skip: nginx ? false : NGINX_MISSING }, () => {
    for (const c of [
      conf,
      toNginxConfig({
        ...base,
        untagged: 'a1',
        serverName: 'olp.lan *.olp.lan',
        instances: [A1, { ...B2, address: '127.0.0.1:4000' }],
      }),
    ]) {
      const r = checkNginxConfig(nginx!, c);
      assert.ok(r.ok, r.output);
    }
    // The certificate as docs/front-door.md makes it (openssl, a SAN for the name clients use).
    const dir = mkdtempSync(join(tmpdir(), 'olp-front-tls-'));
    try {
      const made = spawnSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-days',
          '825',
          '-subj',
          '/CN=olp front',
          '-addext',
          'subjectAltName=DNS:olp.lan,IP:127.0.0.1',
          '-keyout',
          join(dir, 'key.pem'),
          '-out',
          join(dir, 'cert.pem'),
        ],
        { encoding: 'utf8' },
      );
      if (made.status !== 0) return; // no openssl here: the plain configs were checked
      const r = checkNginxConfig(
        nginx!,
        toNginxConfig({ ...base, instances: [A1], tls: { cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') } }),
      );
      assert.ok(r.ok, r.output);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
