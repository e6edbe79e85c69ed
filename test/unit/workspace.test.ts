import assert from 'node:assert/strict';
import {
  chmodSync,
  existsSync,
  lstatSync,
  statfsSync,
  symlinkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createTreeRemover } from '../../src/process/index.js';
import { createWorkspaces as create, runDirFor, toChildEnv } from '../../src/workspace/index.js';

/** Every state dir a test made, removed when the file's tests are done. */
const made: string[] = [];
const state = () => {
  const dir = mkdtempSync(join(tmpdir(), 'olp-ws-'));
  made.push(dir);
  return dir;
};
after(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});
/** Workspaces with the run dir under the state dir, where these tests look for them. */
const createWorkspaces = (dir: string) => create(dir, { runDir: join(dir, 'run') });

describe('workspaces', () => {
  it('creates <state>/run/<key>/<request>/{home,work} 0700, links only what is asked, removes it all', () => {
    const dir = state();
    const creds = join(dir, 'creds.json');
    writeFileSync(creds, '{}');
    const w = createWorkspaces(dir);
    const ws = w.create({
      keyId: 'k1',
      requestId: 'r1',
      links: [
        { from: creds, to: '.claude/.credentials.json' },
        { from: join(dir, 'missing'), to: 'x' },
      ],
    });
    assert.equal(ws.home, join(dir, 'run/k1/r1/home'));
    assert.equal(ws.cwd, join(dir, 'run/k1/r1/work'));
    for (const d of [join(dir, 'run'), join(dir, 'run/k1'), ws.dir, ws.home, ws.cwd])
      assert.equal(statSync(d).mode & 0o777, 0o700, d);
    assert.equal(readlinkSync(join(ws.home, '.claude/.credentials.json')), creds);
    assert.ok(!existsSync(join(ws.home, 'x')), 'missing sources are skipped');
    ws.writeFile('system-prompt.txt', 'hi');
    assert.equal(statSync(ws.path('system-prompt.txt')).mode & 0o777, 0o600);
    assert.throws(() => ws.writeFile('system-prompt.txt', 'again'), /EEXIST/);
    assert.throws(() => ws.path('../../escape'), /escapes/);
    // Plain names take a short cut; anything that could climb out is resolved and refused.
    for (const bad of ['..', 'a/../../x', 'a/./../..', '/etc/passwd', '.', 'a/..'])
      assert.throws(() => ws.path(bad), /escapes/, bad);
    assert.equal(ws.path('a/../b'), join(ws.dir, 'b'));
    assert.equal(ws.path('.claude/projects'), join(ws.dir, '.claude/projects'));
    assert.equal(ws.path('..x/...'), join(ws.dir, '..x/...'));
    assert.equal(w.count(), 1);
    ws.remove();
    ws.remove();
    assert.equal(w.count(), 0);
    assert.ok(!existsSync(ws.dir));
  });

  it('refuses path segments that could traverse', () => {
    const w = createWorkspaces(state());
    for (const bad of ['..', '../x', 'a/b', '', '.hidden'])
      assert.throws(() => w.create({ keyId: bad, requestId: 'r' }), /unsafe/);
  });

  it('a slot gets a stable cwd and persistent dir that outlive the request; HOME stays fresh', () => {
    const dir = state();
    const w = createWorkspaces(dir);
    const a = w.create({ keyId: 'k', requestId: 'r1', slot: 's0' });
    writeFileSync(join(a.persistent, 'session.jsonl'), 'x');
    a.remove();
    const b = w.create({ keyId: 'k', requestId: 'r2', slot: 's0' });
    assert.equal(b.cwd, a.cwd);
    assert.equal(b.cwd, join(dir, 'slots/k/s0/work'));
    assert.notEqual(b.home, a.home);
    assert.ok(existsSync(join(b.persistent, 'session.jsonl')), 'the CLI session store survived');
    b.remove();
    w.removeSlot('k', 's0');
    assert.ok(!existsSync(join(dir, 'slots/k/s0')));
  });

  it('a slot reset sets the old session files aside at once and deletes them off the event loop; a sweep finds any left', async () => {
    const dir = state();
    const w = createWorkspaces(dir);
    const a = w.create({
      keyId: 'k',
      requestId: 'r1',
      slot: 's0',
      links: [{ from: 'projects', to: '.claude/projects', persistent: true }],
    });
    writeFileSync(join(a.persistent, 'projects', 'old.jsonl'), 'x');
    a.remove();
    const b = w.create({
      keyId: 'k',
      requestId: 'r2',
      slot: 's0',
      resetSlot: {},
      links: [{ from: 'projects', to: '.claude/projects', persistent: true }],
    });
    assert.deepEqual(readdirSync(join(b.persistent, 'projects')), [], 'the new session starts empty');
    await w.settled();
    assert.deepEqual(readdirSync(join(dir, 'slots/k/s0')).sort(), ['state', 'work']);
    b.remove();
    // A crash between the rename and the delete leaves a set-aside folder: the next sweep removes it.
    mkdirSync(join(dir, 'slots/k/s0/state.discarded-1-1'), { recursive: true });
    w.sweep();
    assert.deepEqual(readdirSync(join(dir, 'slots/k/s0')).sort(), ['state', 'work']);
  });

  it("a slot reset that knows the old session's id deletes only that session's files, in the background, and makes no directory", async () => {
    const dir = state();
    const w = createWorkspaces(dir);
    const links = [{ from: 'projects', to: '.claude/projects', persistent: true }];
    const old = '0b7e6f0a-1111-4222-8333-944445555666';
    const other = '7c1d2e3f-aaaa-4bbb-8ccc-dddddddddddd';
    const a = w.create({ keyId: 'k', requestId: 'r1', slot: 's0', links });
    mkdirSync(join(a.persistent, 'projects', 'slug', old, 'subagents'), { recursive: true });
    writeFileSync(join(a.persistent, 'projects', 'slug', `${old}.jsonl`), 'old');
    writeFileSync(join(a.persistent, 'projects', 'slug', `${other}.jsonl`), 'a session olp still knows');
    a.remove();
    const inode = statSync(join(a.persistent, 'projects')).ino;
    const b = w.create({ keyId: 'k', requestId: 'r2', slot: 's0', resetSlot: { staleSession: old }, links });
    assert.equal(statSync(join(b.persistent, 'projects')).ino, inode, 'the session store was not made again');
    await w.settled();
    assert.deepEqual(readdirSync(join(b.persistent, 'projects', 'slug')), [`${other}.jsonl`]);
    assert.deepEqual(readdirSync(join(dir, 'slots/k/s0')).sort(), ['state', 'work']);
    b.remove();
    // A fresh process knows nothing of what the store holds: its first reset clears all of it.
    const w2 = createWorkspaces(dir);
    const c = w2.create({ keyId: 'k', requestId: 'r3', slot: 's0', resetSlot: { staleSession: other }, links });
    assert.deepEqual(readdirSync(join(c.persistent, 'projects')), []);
    await w2.settled();
    c.remove();
  });

  it("a reset's prune waits for the old session's writer to be gone; prunes() says when a reset is one", async () => {
    const dir = state();
    const w = createWorkspaces(dir);
    const links = [{ from: 'projects', to: '.claude/projects', persistent: true }];
    const old = '0b7e6f0a-1111-4222-8333-944445555666';
    assert.equal(w.prunes('k', 's0', old), false, 'a store this process has not made is cleared whole');
    const a = w.create({ keyId: 'k', requestId: 'r1', slot: 's0', links });
    a.remove();
    assert.equal(w.prunes('k', 's0', old), true);
    assert.equal(w.prunes('k', 's0', undefined), false, 'an unknown session: the whole store goes');
    assert.equal(w.prunes('k', 's0', '../x'), false, 'not a session id');
    let exited!: () => void;
    const after = new Promise<void>((resolve) => (exited = resolve));
    const b = w.create({ keyId: 'k', requestId: 'r2', slot: 's0', resetSlot: { staleSession: old, after }, links });
    // The old CLI is still exiting: it writes its session after the new turn has started.
    const file = join(b.persistent, 'projects', `${old}.jsonl`);
    writeFileSync(file, 'flushed on the way out');
    await new Promise((r) => setTimeout(r, 400)); // two remover windows
    assert.ok(existsSync(file), 'nothing is deleted while the old session may still be written');
    exited();
    await w.settled();
    assert.ok(!existsSync(file), 'deleted once its writer is gone');
    b.remove();
  });

  it('the background remover prunes by name with find, or in JavaScript without it', async () => {
    for (const path of [process.env.PATH ?? '', '/nonexistent']) {
      const dir = state();
      mkdirSync(join(dir, 'a', 'x-abc123def-y'), { recursive: true });
      writeFileSync(join(dir, 'a', 'x-abc123def-y', 'inner'), '');
      writeFileSync(join(dir, 'a', 'abc123def.jsonl'), '');
      writeFileSync(join(dir, 'a', 'keep.jsonl'), '');
      const saved = process.env.PATH;
      process.env.PATH = path;
      try {
        await createTreeRemover(0).prune(dir, 'abc123def');
      } finally {
        process.env.PATH = saved;
      }
      assert.deepEqual(readdirSync(join(dir, 'a')), ['keep.jsonl'], `PATH=${path}`);
    }
  });

  it('a slot deleted behind its back (olp sessions rotate from another process) is made again', () => {
    const dir = state();
    const w = createWorkspaces(dir);
    w.create({ keyId: 'k', requestId: 'r1', slot: 's0' }).remove();
    rmSync(join(dir, 'slots/k'), { recursive: true, force: true });
    const again = w.create({ keyId: 'k', requestId: 'r2', slot: 's0', resetSlot: {} });
    assert.ok(existsSync(again.cwd) && existsSync(again.persistent));
  });

  it('sweep removes leftovers and reports them', () => {
    const dir = state();
    const w = createWorkspaces(dir);
    w.create({ keyId: 'k', requestId: 'a' });
    w.create({ keyId: 'k', requestId: 'b' });
    assert.deepEqual(w.sweep(), { workspaces: 2, processes: 0 });
    assert.equal(w.count(), 0);
    // The cached key folder is gone; creating again still works.
    const again = w.create({ keyId: 'k', requestId: 'c' });
    assert.ok(lstatSync(again.dir).isDirectory());
  });
});

describe('child environment', () => {
  it('is an allowlist plus what the backend sets; HOME is the workspace', () => {
    const env = toChildEnv(
      { PATH: '/bin', LANG: 'C', SECRET: 's', ANTHROPIC_API_KEY: 'k', CLAUDECODE: '1', HOME: '/root' },
      { set: { A: '1' }, pass: ['ANTHROPIC_API_KEY', 'CLAUDECODE'], deny: (n) => n === 'CLAUDECODE' },
      '/ws/home',
    );
    assert.deepEqual(env, { PATH: '/bin', LANG: 'C', ANTHROPIC_API_KEY: 'k', A: '1', HOME: '/ws/home' });
  });

  it('by default puts throwaway workspaces in a private folder on tmpfs, and takes it away at close', () => {
    const dir = state();
    const w = create(dir);
    const uid = process.getuid!();
    const shmIsTmpfs = statfsSync('/dev/shm', { bigint: false }).type === 0x01021994;
    if (shmIsTmpfs) {
      assert.match(w.root, new RegExp(`^/dev/shm/olp-${uid}/[0-9a-f]{16}$`));
      assert.equal(statSync(`/dev/shm/olp-${uid}`).mode & 0o777, 0o700);
    } else assert.equal(w.root, join(dir, 'run'));
    assert.equal(runDirFor(dir), w.root, 'the same state dir always maps to the same run dir');
    assert.notEqual(runDirFor(state()), w.root, 'another state dir gets its own');
    const ws = w.create({ keyId: 'k', requestId: 'r' });
    assert.ok(ws.home.startsWith(w.root + '/'));
    assert.equal(statSync(w.root).mode & 0o777, 0o700);
    assert.deepEqual(w.sweep(), { workspaces: 1, processes: 0 });
    w.close();
    assert.ok(!existsSync(w.root), 'nothing is left behind');
  });

  it('falls back to <state>/run when the shared folder is not a private directory of ours', () => {
    const dir = state();
    const uid = process.getuid!();
    const shm = mkdtempSync(join('/dev/shm', 'olp-test-shm-'));
    try {
      // A symlink planted where our folder would be (someone else's trap).
      symlinkSync(dir, join(shm, `olp-${uid}`));
      assert.equal(runDirFor(dir, undefined, shm), join(dir, 'run'));
      rmSync(join(shm, `olp-${uid}`));
      // A folder others can enter.
      mkdirSync(join(shm, `olp-${uid}`), { mode: 0o755 });
      chmodSync(join(shm, `olp-${uid}`), 0o755);
      assert.equal(runDirFor(dir, undefined, shm), join(dir, 'run'));
      rmSync(join(shm, `olp-${uid}`), { recursive: true });
      // A disk, not tmpfs.
      assert.equal(runDirFor(dir, undefined, dir), join(dir, 'run'));
      // An explicit run dir always wins.
      assert.equal(runDirFor(dir, join(dir, 'elsewhere')), join(dir, 'elsewhere'));
    } finally {
      rmSync(shm, { recursive: true, force: true });
    }
  });

  it('a start-up sweep also empties the old <state>/run a crash may have left', () => {
    const dir = state();
    const old = createWorkspaces(dir);
    old.create({ keyId: 'k', requestId: 'r1' });
    const w = create(dir, { runDir: join(dir, 'elsewhere') });
    w.create({ keyId: 'k', requestId: 'r2' });
    assert.deepEqual(w.sweep(), { workspaces: 2, processes: 0 });
    assert.deepEqual(readdirSync(join(dir, 'run')), []);
  });
});
