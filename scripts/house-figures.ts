// Figures about the shape of the src tree, to compare a refactor's before and after:
//   npm run figures [-- <src dir>]        (default: this checkout's src/)
//
// Definitions:
// - lines per file: newline-terminated lines of each src/**/*.ts file (`wc -l`); median, p90 (nearest rank), max.
// - long lines: lines over 120 characters, counted over all src files.
// - import circles: strongly connected components of the file-level graph of relative imports (type-only
//   imports included, since they still tie the files' designs together; the count without them follows in
//   brackets). Each circle is listed by its files.
// - arrows up: imports between top-level folders that run against request order. STAGES below lists the
//   folders from the outside in, the way a request travels (src/README.md; ARCHITECTURE §1 and §12): the CLI
//   entry, the composition root, the wire adapters, the conversation core, the run stage, the live CLIs, the
//   process. A folder may import folders after it; an import of one before it is an arrow up. Where the
//   order a request runs in and the shapes it carries disagree, the shapes decide: auth and
//   transcript run early, but Principal and Prompt are carried by the stages below, so those folders sit
//   after them (the wire formats map into the core's own messages, in core/, so wire/ sits where it runs); metrics observes the conversation's result, so it sits right after
//   conversation/. The shared base (BASE) follows every stage, in its own order. A folder in neither list is
//   reported as unplaced. Counted once per pair of folders, with the number of importing files.
// - module-level lets: `let` / `export let` declarations at column 0 (mutable module state).
// - functions over 80 lines, longest functions: every function-like node with a body (declarations,
//   expressions, arrows, methods, accessors, constructors), parsed by the TypeScript compiler; its lines run
//   from its first token to its last (end line − start line + 1), so an enclosing function counts the lines
//   of the functions nested in it. Anonymous ones are named by what holds them (scripts/house.ts).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type FunctionLength,
  folderOf,
  functionLengths,
  MAX_FUNCTION_LINES,
  importCircles,
  readSrc,
  type SrcFile,
} from './house.js';

/** Request order, outside in (see the header for how shapes place a folder). */
export const STAGES = [
  'cli', // commands; `serve` builds the daemon
  'front', // `olp front`: a reverse proxy's config for several instances (no request passes here)
  '', // src/serve.ts: the composition root
  'http', // routes and wire adapters
  'page', // the usage page the server serves
  'keys', // owner key management (`olp keys`, /olp/keys)
  'wire', // one folder per wire format (chat, responses, messages): its schema, its mapping into the
  // core's input and the writer of its events; the route around them is http's
  'conversation', // open, admit, fallback chain, lease, the one ledger row
  'metrics', // observes the conversation's result
  'alerts', // the owner's webhook, on budgets and plan windows passing their marks
  'admit',
  'models', // route: model → backend
  'turn', // the run stage (becomes run/)
  'run',
  'workers', // live CLIs
  'sessions', // the per-key session pool and its leases
  'logins', // the members' own CLI logins
  'backends', // invocation and stdout parsing per CLI
  'record', // record/replay around the process
  'workspace',
  'process', // spawn
  'tools', // the MCP tool bridge and parked turns
  'plan', // plan windows and overage
  'transcript', // messages → prompt
  'auth', // bearer key → Principal
];
/** Used by every stage; ordered among themselves the same way. */
export const BASE = ['store', 'config', 'queue', 'errors', 'log', 'ids', 'core', 'native'];

const ORDER = [...STAGES, ...BASE];

export interface Figures {
  files: number;
  median: number;
  p90: number;
  max: { lines: number; path: string };
  over250: { path: string; lines: number }[];
  longLines: number;
  circles: string[][];
  runtimeCircles: number;
  arrowsUp: { from: string; to: string; files: number }[];
  unplaced: string[];
  moduleLets: { path: string; line: number }[];
  /** Functions over MAX_FUNCTION_LINES, longest first. */
  longFunctions: FunctionLength[];
  /** The ten longest functions. */
  longestFunctions: FunctionLength[];
}

/** Nearest-rank percentile of sorted numbers. */
function rank(sorted: number[], p: number): number {
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

export function figures(files: SrcFile[], functions: FunctionLength[]): Figures {
  const counts = files.map((f) => f.lines.length).sort((a, b) => a - b);
  const mid = counts.length / 2;
  const median = counts.length % 2 ? counts[Math.floor(mid)]! : (counts[mid - 1]! + counts[mid]!) / 2;
  const byLength = [...functions].sort((a, b) => b.lines - a.lines || a.path.localeCompare(b.path) || a.line - b.line);
  const largest = files.reduce((a, b) => (b.lines.length > a.lines.length ? b : a));
  const up = new Map<string, Set<string>>();
  for (const f of files) {
    const from = folderOf(f.path);
    for (const i of f.imports) {
      const to = folderOf(i.target);
      const a = ORDER.indexOf(from);
      const b = ORDER.indexOf(to);
      if (from === to || a < 0 || b < 0 || b > a) continue;
      const key = `${from || 'serve.ts'} → ${to || 'serve.ts'}`;
      up.set(key, (up.get(key) ?? new Set()).add(f.path));
    }
  }
  return {
    files: files.length,
    median,
    p90: rank(counts, 90),
    max: { lines: largest.lines.length, path: largest.path },
    over250: files
      .filter((f) => f.lines.length > 250)
      .map((f) => ({ path: f.path, lines: f.lines.length }))
      .sort((a, b) => b.lines - a.lines),
    longLines: files.reduce((n, f) => n + f.lines.filter((l) => l.length > 120).length, 0),
    circles: importCircles(files),
    runtimeCircles: importCircles(files, true).length,
    arrowsUp: [...up].map(([k, s]) => {
      const [from, to] = k.split(' → ') as [string, string];
      return { from, to, files: s.size };
    }),
    unplaced: [...new Set(files.map((f) => folderOf(f.path)))].filter((d) => !ORDER.includes(d)).sort(),
    moduleLets: files.flatMap((f) =>
      f.lines.flatMap((l, i) => (/^(export\s+)?let\s/.test(l) ? [{ path: f.path, line: i + 1 }] : [])),
    ),
    longFunctions: byLength.filter((f) => f.lines > MAX_FUNCTION_LINES),
    longestFunctions: byLength.slice(0, 10),
  };
}

/** One function a line: `path:line name lines`. */
function listFunctions(functions: FunctionLength[]): string {
  return functions.map((f) => `\n  ${f.path}:${f.line} ${f.name} ${f.lines}`).join('');
}

function print(root: string, x: Figures): void {
  const out = [
    `src: ${root}`,
    `src files: ${x.files}`,
    `lines per file: median ${x.median}, p90 ${x.p90}, max ${x.max.lines} (${x.max.path})`,
    `files over 250 lines: ${x.over250.length}${x.over250.map((f) => `\n  ${f.path} ${f.lines}`).join('')}`,
    `lines over 120 characters: ${x.longLines}`,
    `import circles: ${x.circles.length} (${x.runtimeCircles} without type-only imports)` +
      x.circles.map((c) => `\n  ${c.join(' ↔ ')}`).join(''),
    `arrows up: ${x.arrowsUp.length}${x.arrowsUp.map((a) => `\n  ${a.from} → ${a.to} (${a.files} files)`).join('')}`,
    `module-level lets: ${x.moduleLets.length}${x.moduleLets.map((l) => `\n  ${l.path}:${l.line}`).join('')}`,
    `functions over ${MAX_FUNCTION_LINES} lines: ${x.longFunctions.length}${listFunctions(x.longFunctions)}`,
    `longest functions:${listFunctions(x.longestFunctions)}`,
  ];
  if (x.unplaced.length > 0) out.push(`folders in no stage (add them to STAGES or BASE): ${x.unplaced.join(', ')}`);
  console.log(out.join('\n'));
}

const self = fileURLToPath(import.meta.url);
if (process.argv[1] === self) {
  const root = process.argv[2] ?? join(self, '../../../src');
  if (!existsSync(root)) {
    console.error(`no such directory: ${root}`);
    process.exit(2);
  }
  const files = readSrc(root);
  print(root, figures(files, functionLengths(root, files)));
}
