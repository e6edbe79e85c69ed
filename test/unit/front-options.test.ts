// `olp front`'s options and what it asks of instances: each mistake is one line and exit 1 (a missing
// --instance is a usage error), a bare URL's tag comes from the owner view of its /health with a key from
// OLP_OWNER_KEYS, and no key ever reaches the output or a message.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { runFront } from '../../src/cli/front.js';
import { UsageError } from '../../src/cli/keys.js';
import type { Io } from '../../src/cli/store-command.js';
import { parseInstanceSpec, parseListen } from '../../src/front/index.js';

const KEY_A = `olpk_a1_${'A'.repeat(43)}`;
const KEY_B = `olpk_b2_${'B'.repeat(43)}`;
const LEGACY = `olpk_${'L'.repeat(43)}`;
const MEMBER = `olpk_a1_${'M'.repeat(43)}`;

/** Runs `olp front ARGS` in process: exit code, stdout, stderr. */
async function front(args: string[], env: Record<string, string> = {}) {
  let out = '';
  let err = '';
  const sink = (add: (s: string) => void) => ({
    write: (s: string) => {
      add(s);
      return true;
    },
    drain: async () => true,
    closed: false,
  });
  const io: Io = { env, stdout: sink((s) => (out += s)), stderr: sink((s) => (err += s)) };
  const code = await runFront(args, io, 'olp test', '/home/me');
  return { code, out, err };
}

/** A stand-in olp /health: the owner view (with this instance tag) for `owner`, the short view for `member`, 421 for another instance's key. */
function healthStandIn(owner: string, tag: string | null | undefined, seen: string[]): Server {
  return createServer((req, res) => {
    const auth = req.headers.authorization ?? '';
    seen.push(auth);
    res.setHeader('content-type', 'application/json');
    if (auth === `Bearer ${owner}`) {
      res.end(JSON.stringify({ status: 'ok', backends: {}, ...(tag === undefined ? {} : { instance: { tag } }) }));
    } else if (auth === `Bearer ${MEMBER}`) res.end('{"status":"ok"}');
    else if (/^Bearer olpk_[a-z0-9]+_/.test(auth)) {
      // A key of another instance, as olp answers it (its tag names where it belongs).
      res.statusCode = 421;
      res.end('{"error":{"code":"wrong_instance"}}');
    } else {
      res.statusCode = 401;
      res.end('{"error":{"code":"invalid_api_key"}}');
    }
  });
}

const servers: { url: string; seen: string[]; server: Server }[] = [];
async function listen(owner: string, tag: string | null | undefined) {
  const seen: string[] = [];
  const server = healthStandIn(owner, tag, seen);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const s = { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, seen, server };
  servers.push(s);
  return s;
}
after(() => servers.forEach((s) => s.server.close()));

describe('olp front: options', () => {
  it("parses TAG=URL and bare URLs, /v1 allowed; refuses what is not olp's own http address", () => {
    assert.deepEqual(parseInstanceSpec('a1=http://10.0.0.2:8787/v1'), {
      tag: 'a1',
      origin: 'http://10.0.0.2:8787',
      address: '10.0.0.2:8787',
    });
    assert.deepEqual(parseInstanceSpec('http://olp.lan'), {
      tag: undefined,
      origin: 'http://olp.lan:80',
      address: 'olp.lan:80',
    });
    assert.equal(parseInstanceSpec('b2=http://[::1]:4000/').address, '[::1]:4000');
    assert.equal(
      parseInstanceSpec('c3=http://localhost:8787').address,
      '127.0.0.1:8787',
      'one address, as olp listens',
    );
    for (const [raw, says] of [
      ['A1=http://x:1', /'A1' is not an instance tag/],
      ['a_1=http://x:1', /not an instance tag/],
      ['abcdefghijklmnopq=http://x:1', /not an instance tag/],
      ['a1=https://x:1', /olp answers on http:\/\//],
      ['a1=http://u:p@x:1', /user or password/],
      ['a1=http://x:1/other', /the path '\/other'/],
      ['a1=http://x:1/?q=1', /query/],
      ['localhost:8787', /is not a URL/],
      ['a1=http://x;y:1', /not a URL|not a host/],
    ] as const)
      assert.throws(() => parseInstanceSpec(raw), says, raw);
  });

  it('--listen: HOST:PORT, [v6]:PORT, or a port on 127.0.0.1', () => {
    assert.equal(parseListen('0.0.0.0:8080'), '0.0.0.0:8080');
    assert.equal(parseListen('[::]:8080'), '[::]:8080');
    assert.equal(parseListen('9000'), '127.0.0.1:9000');
    for (const bad of ['0.0.0.0:0', '70000', 'host', 'a b:80', '1.2.3.4:80;evil'])
      assert.throws(() => parseListen(bad), /--listen/, bad);
  });

  for (const [args, says] of [
    [['nginx', '--instance', 'a1=http://x:1', '--instance', 'a1=http://y:2'], /two instances have the tag 'a1'/],
    [['nginx', '--instance', 'a1=http://x:1', '--instance', 'b2=http://x:1'], /http:\/\/x:1 is given twice/],
    [['nginx', '--instance', 'a1=http://x:1', '--tls-cert', 'c.pem'], /--tls-cert and --tls-key go together/],
    [['nginx', '--instance', 'a1=http://x:1', '--untagged', 'b2'], /--untagged b2: no --instance has that tag/],
    [['nginx', '--instance', 'a1=http://x:1', '--tls-cert', 'my "cert"', '--tls-key', 'k'], /--tls-cert/],
    [['nginx', '--instance', 'a1=http://x:1', '--server-name', 'x;y'], /--server-name/],
    [['nginx', '--instance', 'a1=ftp://x:1'], /olp answers on http:\/\//],
  ] as const) {
    it(`${args.slice(1).join(' ')}: one line, exit 1, nothing on stdout`, async () => {
      const r = await front([...args]);
      assert.equal(r.code, 1);
      assert.equal(r.out, '');
      assert.match(r.err, says);
      assert.match(r.err, /^olp front: [^\n]+\n$/);
    });
  }

  it('no --instance, an unknown sub-command, or a misplaced option: usage errors', async () => {
    await assert.rejects(front(['nginx']), (e) => e instanceof UsageError && /at least one --instance/.test(e.message));
    await assert.rejects(front(['caddy', '--instance', 'a1=http://x:1']), UsageError);
    await assert.rejects(front(['prometheus', '--instance', 'a1=http://x:1', '--listen', '80']), /for olp front nginx/);
    await assert.rejects(
      front(['nginx', '--instance', 'a1=http://x:1', '--credentials-dir', '/x']),
      /for olp front prometheus/,
    );
  });

  it('makes relative TLS paths absolute and prints help without an argument', async () => {
    const r = await front(['nginx', '--instance', 'a1=http://x:1', '--tls-cert', 'c.pem', '--tls-key', 'tls/k.pem']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /ssl_certificate "\/home\/me\/c\.pem";\n\s+ssl_certificate_key "\/home\/me\/tls\/k\.pem";/);
    assert.match((await front([])).out, /^Usage: olp front nginx\|prometheus/);
  });

  it('prometheus: one job per instance, its tag as a label, a credentials file per tag and no key', async () => {
    const r = await front([
      'prometheus',
      '--instance',
      'a1=http://10.0.0.2:8787',
      '--instance',
      'b2=http://10.0.0.3:8787',
      '--credentials-dir',
      'keys/',
    ]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^scrape_configs:\n {2}- job_name: olp_a1\n/m);
    assert.match(
      r.out,
      /credentials_file: "\/home\/me\/keys\/a1\.key"[\s\S]*targets: \["10\.0\.0\.2:8787"\]\n\s+labels:\n\s+instance_tag: a1\n/,
    );
    assert.match(r.out, /credentials_file: "\/home\/me\/keys\/b2\.key"[\s\S]*instance_tag: b2\n/);
    assert.match(r.out, /type: Bearer/);
    assert.match((await front(['prometheus', '--instance', 'a1=http://x:1'])).out, /"\/etc\/prometheus\/olp\/a1\.key"/);
  });
});

describe('olp front: a bare --instance URL is asked its tag', () => {
  let a: Awaited<ReturnType<typeof listen>>;
  let b: Awaited<ReturnType<typeof listen>>;
  before(async () => {
    a = await listen(KEY_A, 'a1');
    b = await listen(KEY_B, 'b2');
  });

  it('tries the keys of OLP_OWNER_KEYS in turn; a key one instance took is not sent to the next', async () => {
    a.seen.length = 0;
    b.seen.length = 0;
    const r = await front(['nginx', '--instance', a.url, '--instance', b.url], {
      OLP_OWNER_KEYS: ` ${MEMBER}\n${KEY_B} ${LEGACY}  ${KEY_A} `,
    });
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /a1 olp_a1;\n\s+b2 olp_b2;/);
    // (undici sends a request that got 421 once more, on a new connection: RFC 9110 allows it.)
    assert.deepEqual(
      [...new Set(a.seen)],
      [`Bearer ${MEMBER}`, `Bearer ${KEY_B}`, `Bearer ${LEGACY}`, `Bearer ${KEY_A}`],
      'a member key is not an owner view',
    );
    assert.deepEqual([...new Set(b.seen)], [`Bearer ${MEMBER}`, `Bearer ${KEY_B}`]);
    for (const k of [KEY_A, KEY_B, MEMBER, LEGACY]) assert.ok(!r.out.includes(k) && !r.err.includes(k));
  });

  it('says which instance refused every key, without any key in the message', async () => {
    const r = await front(['nginx', '--instance', a.url], { OLP_OWNER_KEYS: `${KEY_B} ${MEMBER}` });
    assert.equal(r.code, 1);
    assert.equal(r.err, `olp front: ${a.url} took none of the 2 key(s) in OLP_OWNER_KEYS as an owner key\n`);
    const none = await front(['nginx', '--instance', a.url]);
    assert.match(none.err, /put an owner key of it in OLP_OWNER_KEYS \(or give --instance TAG=/);
  });

  it('an instance without a tag: says how to set it; two instances saying one tag: refused', async () => {
    const untagged = await listen(KEY_A, null);
    const r = await front(['nginx', '--instance', untagged.url], { OLP_OWNER_KEYS: KEY_A });
    assert.equal(r.code, 1);
    assert.match(
      r.err,
      /has no instance tag: set `instanceTag` there: `olp serve --instance-tag a1` or in its config\.json\n$/,
    );
    const old = await listen(KEY_A, undefined);
    assert.match(
      (await front(['nginx', '--instance', old.url], { OLP_OWNER_KEYS: KEY_A })).err,
      /from before instance tags/,
    );
    const twin = await listen(KEY_B, 'a1');
    const both = await front(['nginx', '--instance', a.url, '--instance', twin.url], {
      OLP_OWNER_KEYS: `${KEY_A} ${KEY_B}`,
    });
    assert.match(both.err, /two instances have the tag 'a1'/);
  });

  it('an unreachable instance: one line naming it', async () => {
    const gone = await listen(KEY_A, 'a1');
    await new Promise<void>((r) => gone.server.close(() => r()));
    const r = await front(['nginx', '--instance', gone.url], { OLP_OWNER_KEYS: KEY_A });
    assert.equal(r.code, 1);
    assert.equal(r.err, `olp front: cannot reach ${gone.url}/health (ECONNREFUSED)\n`);
  });
});
