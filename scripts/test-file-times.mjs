// A reporter for Node's test runner that prints, once the suite ends, each test file's own time
// (the sum of its top-level tests' durations) and its share of the whole, slowest first, with the
// time per tier (test/unit, test/http, test/e2e, test/clients, test/real). Used by
// `node scripts/run-tests.mjs --times` beside the spec reporter, to see which files to split or speed up.
import { relative } from 'node:path';

const TIERS = ['unit', 'http', 'e2e', 'clients', 'real'];

/** The file's tier: the folder under test/ it sits in. */
function tierOf(file) {
  const parts = file.split('/');
  const i = parts.indexOf('test');
  return i >= 0 && TIERS.includes(parts[i + 1]) ? parts[i + 1] : 'other';
}

export default async function* fileTimes(source) {
  const byFile = new Map();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { file, nesting, details } = event.data;
    if (!file || nesting !== 0 || typeof details?.duration_ms !== 'number') continue;
    byFile.set(file, (byFile.get(file) ?? 0) + details.duration_ms);
  }
  const rows = [...byFile].sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((n, [, ms]) => n + ms, 0) || 1;
  const tiers = new Map();
  for (const [file, ms] of rows) tiers.set(tierOf(file), (tiers.get(tierOf(file)) ?? 0) + ms);
  yield `\ntest time by tier (sum of files; files run ${process.env.OLP_TEST_CONCURRENCY ?? 'several'} at a time):\n`;
  for (const [tier, ms] of [...tiers].sort((a, b) => b[1] - a[1]))
    yield `  ${tier.padEnd(8)} ${(ms / 1000).toFixed(1).padStart(7)} s\n`;
  yield `slowest test files:\n`;
  for (const [file, ms] of rows.slice(0, 25))
    yield `  ${(ms / 1000).toFixed(1).padStart(7)} s ${((100 * ms) / total).toFixed(1).padStart(5)} %  ${relative(process.cwd(), file)}\n`;
}
