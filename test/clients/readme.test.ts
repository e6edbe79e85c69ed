// The documentation's client snippets (README.md, CONTRIBUTING.md, docs/*.md), run as they are written
// (only the address is this test's olp), so the documentation cannot drift from what works; and every
// snippet of those files checked for the one mistake that leaks: an olp key where a client sends it
// somewhere else. A snippet to run is marked `<!-- client-snippet: NAME -->`; every copy of a name runs.
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { REAL_CODEX, ROOT } from '../support/paths.js';

interface Block {
  file: string;
  line: number;
  lang: string;
  code: string;
  /** The `<!-- client-snippet: NAME -->` marker right above it, if any. */
  name?: string;
}

/** The documents whose snippets people copy: the README, CONTRIBUTING.md and docs/*.md. */
function documents(): { file: string; text: string }[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => join('docs', f));
  return ['README.md', 'CONTRIBUTING.md', ...docs].map((file) => ({
    file,
    text: readFileSync(join(ROOT, file), 'utf8'),
  }));
}

/** Every fenced code block of those documents (indented ones in lists too), with its marker. */
function blocks(): Block[] {
  const out: Block[] = [];
  for (const { file, text } of documents()) {
    for (const m of text.matchAll(/(?:<!-- client-snippet: ([\w-]+) -->\n)?^([ \t]*)```(\w*)\n([^]*?)\n\2```/gm)) {
      const indent = m[2]!;
      const code = m[4]!
        .split('\n')
        .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
        .join('\n');
      out.push({
        file,
        line: text.slice(0, m.index).split('\n').length,
        lang: m[3]!,
        code,
        ...(m[1] ? { name: m[1] } : {}),
      });
    }
  }
  return out;
}

/** Every snippet of that name, wherever it is (the README and a docs/ page may both carry one). */
function snippets(name: string): Block[] {
  return blocks().filter((b) => b.name === name);
}

const where = (b: Block) => `${b.file}:${b.line}`;
const isJs = (b: Block) => ['js', 'mjs', 'javascript', 'ts', 'typescript'].includes(b.lang);
const isPython = (b: Block) => ['python', 'py'].includes(b.lang);

/** The argument text of each call of a client constructor in a snippet (parentheses balanced). */
function clientCalls(code: string): { callee: string; args: string }[] {
  const calls: { callee: string; args: string }[] = [];
  for (const m of code.matchAll(
    /\b(new\s+OpenAI|AsyncOpenAI|OpenAI|createOpenAI|createOpenAICompatible|new\s+ChatOpenAI|AzureOpenAI)\s*\(/g,
  )) {
    let depth = 1;
    let i = m.index + m[0].length;
    for (; i < code.length && depth > 0; i++) {
      if (code[i] === '(') depth++;
      else if (code[i] === ')') depth--;
    }
    calls.push({ callee: m[1]!.replace(/\s+/, ' '), args: code.slice(m.index + m[0].length, i - 1) });
  }
  return calls;
}

/** What is wrong with a snippet, leak-wise: empty when nothing is. */
function leaks(b: Pick<Block, 'lang' | 'code'>): string[] {
  const found: string[] = [];
  // An olp key (a literal, $OLP_KEY, a fresh `olp keys add`) in OPENAI_API_KEY, in any language.
  for (const line of b.code.split('\n')) {
    if (/OPENAI_API_KEY['"\]]*\s*[:=]/.test(line) && /olpk_|OLP_KEY|keys\s+(add|rotate)/.test(line))
      found.push(`puts an olp key into OPENAI_API_KEY: ${line.trim()}`);
  }
  // The SDK-wide key setters of the Agents SDK also feed its trace exporter.
  if (
    /(setDefaultOpenAIKey|set_default_openai_key|setTracingExportApiKey|set_tracing_export_api_key)\s*\([^)]*(olpk_|OLP_KEY)/.test(
      b.code,
    )
  )
    found.push('hands an olp key to the Agents SDK as its default or tracing key');
  if (isJs(b as Block) || isPython(b as Block)) {
    for (const c of clientCalls(b.code)) {
      if (!/\b(baseURL|base_url)\s*[:=]\s*['"]https?:\/\//.test(c.args))
        found.push(`${c.callee}(…) without an explicit base URL`);
      if (
        !/\b(apiKey|api_key)\s*[:=]\s*(process\.env\.OLP_KEY\b|os\.environ\[\s*['"]OLP_KEY['"]\s*\]|os\.environ\.get\(\s*['"]OLP_KEY['"])/.test(
          c.args,
        )
      )
        found.push(`${c.callee}(…) whose key is not taken from OLP_KEY`);
    }
  }
  // The Agents SDK exports traces to OpenAI's host unless told not to.
  if (/from\s+['"]@openai\/agents['"]/.test(b.code) && !/setTracingDisabled\(\s*true\s*\)/.test(b.code))
    found.push('uses the Agents SDK without setTracingDisabled(true)');
  if (/^\s*from\s+agents\s+import/m.test(b.code) && !/set_tracing_disabled\(\s*True\s*\)/.test(b.code))
    found.push('uses the Agents SDK without set_tracing_disabled(True)');
  for (const m of b.code.matchAll(/set_default_openai_client\(([^\n]*)\)/g))
    if (!/use_for_tracing\s*=\s*False/.test(m[1]!))
      found.push('set_default_openai_client(…) without use_for_tracing=False');
  // codex pointed at olp: its own provider, with the key from OLP_KEY.
  if (/model_providers/.test(b.code) && /:8787\/v1/.test(b.code) && !/env_key\s*=\s*"OLP_KEY"/.test(b.code))
    found.push('a codex model provider for olp whose env_key is not "OLP_KEY"');
  return found;
}

describe('the snippets of the README, CONTRIBUTING.md and docs/ keep an olp key with olp', () => {
  it('the checks catch the mistakes they are for', () => {
    assert.ok(leaks({ lang: 'sh', code: 'export OPENAI_API_KEY=olpk_…' }).length > 0);
    assert.ok(leaks({ lang: 'sh', code: 'export OPENAI_API_KEY="$OLP_KEY"' }).length > 0);
    assert.ok(leaks({ lang: 'sh', code: 'OPENAI_API_KEY=$(olp keys add me) node app.js' }).length > 0);
    assert.ok(leaks({ lang: 'python', code: 'os.environ["OPENAI_API_KEY"] = os.environ["OLP_KEY"]' }).length > 0);
    assert.ok(leaks({ lang: 'js', code: 'const c = new OpenAI({ apiKey: process.env.OLP_KEY });' }).length > 0);
    assert.ok(
      leaks({ lang: 'js', code: "const c = new OpenAI({ baseURL: 'http://127.0.0.1:8787/v1', apiKey: 'olpk_…' });" })
        .length > 0,
    );
    assert.ok(leaks({ lang: 'python', code: 'client = OpenAI(api_key=os.environ["OLP_KEY"])' }).length > 0);
    assert.ok(
      leaks({
        lang: 'js',
        code: "import { Agent } from '@openai/agents';\nsetDefaultOpenAIClient(new OpenAI({ baseURL: 'http://x:8787/v1', apiKey: process.env.OLP_KEY }));",
      }).length > 0,
    );
    assert.ok(
      leaks({
        lang: 'toml',
        code: '[model_providers.olp]\nbase_url = "http://127.0.0.1:8787/v1"\nenv_key = "OPENAI_API_KEY"',
      }).length > 0,
    );
    assert.deepEqual(
      leaks({
        lang: 'js',
        code: "const c = new OpenAI({ baseURL: 'http://127.0.0.1:8787/v1', apiKey: process.env.OLP_KEY });",
      }),
      [],
    );
  });

  it('no snippet puts an olp key into OPENAI_API_KEY, and every client gets an explicit base URL and the key from OLP_KEY', () => {
    const all = blocks();
    assert.ok(
      all.filter((b) => clientCalls(b.code).length > 0).length >= 6,
      'the documents build clients in their snippets',
    );
    const problems = all.flatMap((b) => leaks(b).map((p) => `${where(b)}: ${p}`));
    assert.deepEqual(problems, []);
  });

  it('no hint olp itself prints (commands, start-up, usage page, error messages) mentions OPENAI_API_KEY or OPENAI_BASE_URL', () => {
    const files = ['src/cli', 'src/page', 'src/errors'].flatMap((dir) =>
      readdirSync(join(ROOT, dir))
        .filter((f) => f.endsWith('.ts'))
        .map((f) => join(dir, f)),
    );
    assert.ok(files.length > 10);
    assert.deepEqual(
      files.filter((f) => /OPENAI_(API_KEY|BASE_URL)/.test(readFileSync(join(ROOT, f), 'utf8'))),
      [],
    );
  });

  it('no prose line tells anyone to put an olp key into OPENAI_API_KEY either', () => {
    const problems = documents().flatMap(({ file, text }) =>
      text
        .split('\n')
        .flatMap((line, i) =>
          /OPENAI_API_KEY['"\]]*\s*[:=]\s*\S*(olpk_|OLP_KEY)/.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [],
        ),
    );
    assert.deepEqual(problems, []);
  });
});

let t: TestDaemon;
before(async () => {
  t = await startTestDaemon();
});
after(async () => t.close());

/**
 * The environment a snippet runs in: the key in OLP_KEY, and OpenAI's own variables set to
 * values that fail (a key olp does not know, a closed port), so a snippet that leaned on them
 * would fail here rather than work by accident.
 */
const snippetEnv = () => ({
  PATH: process.env.PATH ?? '',
  OLP_KEY: t.token,
  OPENAI_API_KEY: 'sk-not-an-olp-key',
  OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
});

/** A snippet with olp's documented addresses (loopback or a LAN example) replaced by this test's. */
const localised = (code: string) => code.replace(/http:\/\/[\w.[\]:-]+:8787\/v1/g, t.baseURL);

/** Runs a snippet in a child process (asynchronously: the olp it talks to runs in this one). */
async function run(s: Block, label: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  // Next to the repository's node_modules, so its imports resolve.
  const file = join(ROOT, 'dist', `.readme-snippet-${label}.${isPython(s) ? 'py' : 'mjs'}`);
  writeFileSync(file, localised(s.code));
  try {
    return await new Promise((resolve) => {
      execFile(
        isPython(s) ? 'python3' : process.execPath,
        [file],
        { env: snippetEnv(), encoding: 'utf8', timeout: 60_000 },
        (err, stdout, stderr) => {
          resolve({ status: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
        },
      );
    });
  } finally {
    rmSync(file, { force: true });
  }
}

/** The packages a JavaScript snippet imports that are not installed here. */
function missingImports(code: string): string[] {
  const names = [...code.matchAll(/from\s+['"]([^'"./][^'"]*)['"]/g)].map((m) => {
    const parts = m[1]!.split('/');
    return m[1]!.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
  });
  return [...new Set(names)].filter(
    (n) => !n.startsWith('node:') && !existsSync(join(ROOT, 'node_modules', n, 'package.json')),
  );
}

/** Runs codex, the real binary, as a client; stdin closed (codex exec reads a prompt from a pipe). */
function runCodex(
  args: string[],
  codexHome: string,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(REAL_CODEX, args, {
      cwd: codexHome,
      env: { ...snippetEnv(), HOME: codexHome, CODEX_HOME: codexHome },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 90_000,
    });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    c.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    c.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** The words of a one-command shell snippet: single quotes and line continuations, as the README writes them. */
function shellWords(code: string): string[] {
  const words: string[] = [];
  for (const m of code.replace(/\\\n/g, ' ').matchAll(/'([^']*)'|(\S+)/g)) words.push(m[1] ?? m[2]!);
  return words;
}

/** The names of the snippets run below: each must be in some document. */
const RUN_NAMES = ['openai-js', 'openai-python', 'ai-sdk', 'langchain', 'codex', 'codex-cli'];

describe("the documentation's client snippets", () => {
  it('every snippet these tests run is in a document', () => {
    assert.deepEqual(
      RUN_NAMES.filter((name) => snippets(name).length === 0),
      [],
      'snippets no document has',
    );
  });

  for (const s of snippets('openai-js'))
    it(`openai for JavaScript (${where(s)})`, async () => {
      const r = await run(s, 'openai-js');
      assert.equal(r.status, 0, r.stderr);
      assert.match(
        r.stdout,
        /^Hello from fake claude\. You said: Say hi\nHello from fake claude\. You said: Count to 3\n$/,
      );
    });

  const python = spawnSync('python3', ['-c', 'import openai'], { encoding: 'utf8' });
  for (const s of snippets('openai-python'))
    it(`openai for Python (${where(s)})`, {
      skip: python.status !== 0 ? "Python's openai package is not installed here (pip install openai); skipped" : false,
    }, async () => {
      const r = await run(s, 'openai-python');
      assert.equal(r.status, 0, r.stderr);
      assert.match(
        r.stdout,
        /Hello from fake claude\. You said: Say hi\nHello from fake claude\. You said: Count to 3\n/,
      );
    });

  for (const s of snippets('ai-sdk'))
    it(`the Vercel AI SDK (${where(s)})`, async () => {
      const r = await run(s, 'ai-sdk');
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /^Hello from fake claude\. You said: Say hi\n/);
      assert.match(r.stdout, /Hello from fake claude\. You said: Count to 3\n.*outputTokens/s);
      assert.match(r.stdout, /\{ city: 'fake', temp: 1 \}/);
    });

  for (const s of snippets('langchain'))
    it(`LangChain (${where(s)})`, async () => {
      const r = await run(s, 'langchain');
      assert.equal(r.status, 0, r.stderr);
      assert.match(
        r.stdout,
        /^Hello from fake claude\. You said: Say hi\nHello from fake claude\. You said: Count to 3\n\{ city: 'fake', temp: 1 \}\n$/,
      );
    });

  it('every other JavaScript snippet that builds a client runs (those whose packages the suite does not install are checked as text above)', async () => {
    const others = blocks().filter(
      (b) => isJs(b) && !['openai-js', 'ai-sdk', 'langchain'].includes(b.name ?? '') && clientCalls(b.code).length > 0,
    );
    const ran: string[] = [];
    for (const [i, b] of others.entries()) {
      if (missingImports(b.code).length > 0) continue;
      const r = await run(b, `other-${i}`);
      assert.equal(r.status, 0, `${where(b)}: ${r.stderr}`);
      ran.push(where(b));
    }
    assert.ok(ran.length >= 2, `ran ${ran.join(', ')}`);
  });

  const codexMissing = existsSync(REAL_CODEX) ? false : `the real codex CLI is missing at ${REAL_CODEX}: run npm ci`;
  for (const s of snippets('codex'))
    it(`codex as a client, configured by config.toml, sends its requests and the key in OLP_KEY to olp (${where(s)})`, {
      skip: codexMissing,
    }, async () => {
      const home = mkdtempSync(join(tmpdir(), 'olp-readme-codex-'));
      try {
        writeFileSync(join(home, 'config.toml'), `${localised(s.code)}\n`);
        const before = t.logs.filter((l) => l.event === 'request').length;
        const r = await runCodex(['exec', '--skip-git-repo-check', 'Say hi'], home);
        assert.equal(r.status, 0, r.stderr);
        assert.match(r.stdout, /Hello from fake claude\. You said: Say hi/);
        const requests = t.logs.filter((l) => l.event === 'request').slice(before);
        assert.ok(
          requests.length > 0 &&
            requests.every((l) => l.key === 'tester' && l.path === '/v1/responses' && l.status === 200),
          JSON.stringify(requests),
        );
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    });

  for (const s of snippets('codex-cli'))
    it(`codex as a client, configured on its command line, the same (${where(s)})`, {
      skip: codexMissing,
    }, async () => {
      const home = mkdtempSync(join(tmpdir(), 'olp-readme-codex-'));
      try {
        const [bin, sub, ...rest] = shellWords(localised(s.code));
        assert.equal(`${bin} ${sub}`, 'codex exec');
        const before = t.logs.filter((l) => l.event === 'request').length;
        const r = await runCodex([sub!, '--skip-git-repo-check', ...rest], home);
        assert.equal(r.status, 0, r.stderr);
        assert.match(r.stdout, /Hello from fake claude\. You said: Say hi/);
        const requests = t.logs.filter((l) => l.event === 'request').slice(before);
        assert.ok(
          requests.length > 0 && requests.every((l) => l.key === 'tester' && l.status === 200),
          JSON.stringify(requests),
        );
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    });
});
