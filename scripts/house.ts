// Reads the shape of a src tree: each .ts file's lines and relative imports, the file-level import graph and
// its circles (from the text), and each function's length (parsed by the TypeScript compiler). Shared by
// scripts/house-figures.ts and test/unit/house.test.ts.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import type { FunctionLikeDeclaration, Node, SourceFile } from 'typescript/unstable/ast';
import {
  isBinaryExpression,
  isClassDeclaration,
  isClassExpression,
  isConstructorDeclaration,
  isFunctionDeclaration,
  isFunctionLikeDeclaration,
  isPropertyAssignment,
  isPropertyDeclaration,
  isVariableDeclaration,
} from 'typescript/unstable/ast/is';
import { API } from 'typescript/unstable/sync';

export interface Import {
  /** The specifier as written, e.g. '../errors/index.js'. */
  spec: string;
  /** The imported file, relative to the src root ('errors/index.ts'). */
  target: string;
  /** `import type` / `export type`: erased by tsc, so no load-order edge at run time. */
  typeOnly: boolean;
}

export interface SrcFile {
  /** Path relative to the src root, with '/' separators ('conversation/run.ts'). */
  path: string;
  text: string;
  lines: string[];
  imports: Import[];
}

/** Every .ts file under `root` (declaration files aside), sorted by path. */
export function readSrc(root: string): SrcFile[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) return walk(full);
      return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [full] : [];
    });
  return walk(root)
    .map((full) => relative(root, full).split(sep).join('/'))
    .sort()
    .map((path) => {
      const text = readFileSync(join(root, path), 'utf8');
      const lines = text.split('\n');
      if (lines.at(-1) === '') lines.pop();
      return { path, text, lines, imports: relativeImports(path, text) };
    });
}

// Static `import … from`, `export … from`, side-effect `import '…'` and dynamic `import('…')`, relative only.
const STATIC = /^\s*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

/** The relative imports of one file, resolved to src-relative .ts paths. */
export function relativeImports(path: string, text: string): Import[] {
  const dir = posix.dirname(path);
  const target = (spec: string): string => posix.normalize(posix.join(dir, spec)).replace(/\.js$/, '.ts');
  const found: Import[] = [];
  for (const m of text.matchAll(STATIC)) {
    const spec = m[3]!;
    found.push({ spec, target: target(spec), typeOnly: m[2] !== undefined });
  }
  for (const m of text.matchAll(DYNAMIC)) found.push({ spec: m[1]!, target: target(m[1]!), typeOnly: false });
  return found;
}

/** The top-level folder a src path belongs to ('' for files directly in src, such as serve.ts). */
export function folderOf(path: string): string {
  const i = path.indexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

/**
 * The import circles among files: each strongly connected component of more than one file (or a file
 * importing itself), as its sorted paths. With `runtimeOnly`, type-only imports are left out.
 */
export function importCircles(files: SrcFile[], runtimeOnly = false): string[][] {
  const known = new Set(files.map((f) => f.path));
  const edges = new Map(
    files.map((f) => [
      f.path,
      [...new Set(f.imports.filter((i) => known.has(i.target) && !(runtimeOnly && i.typeOnly)).map((i) => i.target))],
    ]),
  );
  // Tarjan's algorithm, iterative so a deep chain cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const circles: string[][] = [];
  let next = 0;
  for (const start of edges.keys()) {
    if (index.has(start)) continue;
    const work: { node: string; i: number }[] = [{ node: start, i: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const top = work.at(-1)!;
      const out = edges.get(top.node)!;
      if (top.i < out.length) {
        const to = out[top.i++]!;
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, i: 0 });
        } else if (onStack.has(to)) {
          low.set(top.node, Math.min(low.get(top.node)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      const parent = work.at(-1);
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(top.node)!));
      if (low.get(top.node) === index.get(top.node)) {
        const members: string[] = [];
        let m: string;
        do {
          m = stack.pop()!;
          onStack.delete(m);
          members.push(m);
        } while (m !== top.node);
        if (members.length > 1 || out.includes(top.node)) circles.push(members.sort());
      }
    }
  }
  return circles.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** Line numbers (1-based) of `process.env` in a file's code, comment lines aside. */
export function envReads(file: SrcFile): number[] {
  return file.lines.flatMap((line, i) => {
    const code = line.trimStart();
    if (code.startsWith('//') || code.startsWith('*') || code.startsWith('/*')) return [];
    return /\bprocess\.env\b/.test(line) ? [i + 1] : [];
  });
}

/** The house limit on a function's length (test/unit/house.test.ts). */
export const MAX_FUNCTION_LINES = 80;

export interface FunctionLength {
  /** Path relative to the src root, as in SrcFile. */
  path: string;
  /** 1-based line of the function's first token (its modifiers, `async`, `function`, its name or `(`). */
  line: number;
  /**
   * The function's own name; a method or accessor of a class is `Class.name`; an anonymous function is
   * named by the variable, property or assignment target that holds it, else `<anonymous>`.
   */
  name: string;
  /** End line − start line + 1; a nested function's lines count in its enclosing function too. */
  lines: number;
}

/** How a function is named in a `path#name` list: anonymous ones get their line, since they share a name. */
export function functionKey(f: FunctionLength): string {
  return f.name === '<anonymous>' ? `${f.path}#<anonymous>:${f.line}` : `${f.path}#${f.name}`;
}

/**
 * Every function-like node with a body (declarations, expressions, arrows, methods, accessors,
 * constructors) in the given src files, parsed by the TypeScript compiler (its native API, which runs the
 * bundled tsgo and looks up each file's tsconfig from `root`).
 */
export function functionLengths(root: string, files: SrcFile[]): FunctionLength[] {
  const api = new API({ cwd: root });
  try {
    const full = files.map((f) => join(root, f.path));
    const snapshot = api.updateSnapshot({ openFiles: full });
    return files.flatMap((f, i) => {
      const source = snapshot.getDefaultProjectForFile(full[i]!)?.program.getSourceFile(full[i]!);
      if (!source) throw new Error(`the TypeScript API did not parse ${full[i]}`);
      return functionsOf(f.path, source);
    });
  } finally {
    api.close();
  }
}

function functionsOf(path: string, source: SourceFile): FunctionLength[] {
  const found: FunctionLength[] = [];
  const lineOf = (pos: number): number => source.getLineAndCharacterOfPosition(pos).line + 1;
  const visit = (node: Node): void => {
    if (isFunctionLikeDeclaration(node) && node.body) {
      const line = lineOf(node.getStart(source));
      found.push({ path, line, name: functionName(node, source), lines: lineOf(node.end) - line + 1 });
    }
    node.forEachChild(visit);
  };
  source.forEachChild(visit);
  return found;
}

/** A function's name: its own, else what holds it (see FunctionLength.name). */
function functionName(node: FunctionLikeDeclaration, source: SourceFile): string {
  const text = (n: Node): string => source.text.slice(n.getStart(source), n.end);
  const owner = node.parent;
  const inClass = owner && (isClassDeclaration(owner) || isClassExpression(owner)) ? owner : undefined;
  const className = inClass?.name ? text(inClass.name) : inClass ? '<class>' : undefined;
  const prefix = className ? `${className}.` : '';
  if (isConstructorDeclaration(node)) return `${prefix}constructor`;
  const own = 'name' in node ? node.name : undefined;
  if (own) return `${prefix}${text(own)}`;
  if (isFunctionDeclaration(node)) return 'default';
  if (!owner) return '<anonymous>';
  if ((isVariableDeclaration(owner) || isPropertyAssignment(owner) || isPropertyDeclaration(owner)) && owner.name) {
    return `${isPropertyDeclaration(owner) ? prefix : ''}${text(owner.name)}`;
  }
  if (isBinaryExpression(owner) && owner.right === node) return text(owner.left);
  return '<anonymous>';
}
