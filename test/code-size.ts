/**
 * Measures the code for test/size.test.ts: every source file outside the tests and the
 * length of each of its functions, parsed by the TypeScript compiler so that a function
 * is whatever the language says it is (declarations, methods, arrows, function
 * expressions, accessors, constructors), from its first token to its last. Tests and
 * test support (contract suites, *.test-helper.ts, test/) are left out: a `describe`
 * block is a list of cases, not a step of the program.
 *
 * It also finds class members marked with TypeScript's `private` keyword: private
 * state is `#name` (docs/development.md), the keyword is left for constructors.
 *
 * `npx tsx test/code-size.ts` lists what is over the limits.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const MAX_FILE_LINES = 500;
export const MAX_FUNCTION_LINES = 80;

const FOLDERS = ['accounts', 'cli', 'core', 'builder', 'server', 'schemas', 'bench', 'scripts'];

function isTestSupport(path: string): boolean {
  return /\.(test|contract|test-helper)\.ts$/.test(path);
}

/** Every source file outside the tests, relative to `root`. */
function sourceFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) {
        if (name !== 'node_modules' && name !== 'reports' && name !== 'results') walk(path);
      } else if (name.endsWith('.ts') && !name.endsWith('.d.ts') && !isTestSupport(name)) {
        out.push(relative(root, path));
      }
    }
  };
  for (const folder of FOLDERS) {
    try {
      walk(join(root, folder));
    } catch {
      // A folder the checkout does not have (scripts/ is optional).
    }
  }
  return out.sort();
}

export interface FunctionSize {
  /** "file:line name", the name as a reader would search for it. */
  where: string;
  lines: number;
}

function nameOf(node: ts.Node, source: ts.SourceFile): string {
  const named = node as ts.Node & { name?: ts.Node };
  if (named.name) return named.name.getText(source);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent)) return parent.name.getText(source);
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText(source);
  if (parent && ts.isPropertyDeclaration(parent)) return parent.name.getText(source);
  return '(anonymous)';
}

/** The length in lines of every function in one file's text. */
export function functionSizes(path: string, text: string): FunctionSize[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const out: FunctionSize[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      out.push({ where: `${path}:${first + 1} ${nameOf(node, source)}`, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

function lineCount(text: string): number {
  return text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
}

/** Files over the limit, as "path (n lines)". */
export function longFiles(root: string): string[] {
  return sourceFiles(root)
    .map((f) => ({ f, n: lineCount(readFileSync(join(root, f), 'utf8')) }))
    .filter(({ n }) => n >= MAX_FILE_LINES)
    .map(({ f, n }) => `${f} (${n} lines)`);
}

/** Functions over the limit, as "path:line name (n lines)". */
export function longFunctions(root: string): string[] {
  return sourceFiles(root)
    .flatMap((f) => functionSizes(f, readFileSync(join(root, f), 'utf8')))
    .filter(({ lines }) => lines >= MAX_FUNCTION_LINES)
    .map(({ where, lines }) => `${where} (${lines} lines)`);
}

/** Members other than constructors marked `private` in one file's text, as "file:line name". */
export function keywordPrivates(path: string, text: string): string[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    const marked =
      (ts.isClassElement(node) || ts.isParameter(node)) &&
      !ts.isConstructorDeclaration(node) &&
      ts.canHaveModifiers(node) &&
      ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.PrivateKeyword);
    if (marked) {
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      out.push(`${path}:${line + 1} ${nameOf(node, source)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** keywordPrivates over every source file outside the tests. */
export function allKeywordPrivates(root: string): string[] {
  return sourceFiles(root).flatMap((f) => keywordPrivates(f, readFileSync(join(root, f), 'utf8')));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  for (const line of [...longFiles(root), ...longFunctions(root), ...allKeywordPrivates(root)])
    console.log(line);
}
