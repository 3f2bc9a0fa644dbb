#!/usr/bin/env node
/**
 * `node scripts/function-sizes.mjs [--root DIR] [--top N] [--json]`: the longest functions and
 * files in `src/`, measured with the TypeScript compiler's AST (issue 27, "Limits that hold").
 *
 * A function is a function declaration, method, constructor, accessor, function expression or
 * arrow function with a body; its length is the number of lines from its first token (after
 * leading comments) to its closing brace, inclusive. A function nested in another counts for both
 * (the outer one is as long as it reads). Anonymous functions are named after what holds them
 * (`const f = () => ...`, a property `f: () => ...`, `.action(...)`, else `<anonymous>`).
 * A file's length is its number of lines.
 *
 * Prints, for the closing note of a refactor: the N longest functions and files (default 10), and
 * how many functions run past 80 and 100 lines and files past 600. It reports; it does not fail
 * (the limits are not met yet). Exit code 0, or 2 on a usage error.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

function listTs(dir) {
  if (!existsSync(dir)) return [];
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...listTs(p));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

function nameOf(node, sf) {
  if (node.name && (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name) || ts.isPrivateIdentifier(node.name))) return node.name.text;
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const p = node.parent;
  if (p && ts.isVariableDeclaration(p) && ts.isIdentifier(p.name)) return p.name.text;
  if (p && ts.isPropertyAssignment(p) && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name))) return p.name.text;
  if (p && ts.isCallExpression(p) && ts.isPropertyAccessExpression(p.expression)) return `.${p.expression.name.text}(...)`;
  if (p && ts.isCallExpression(p)) return `${p.expression.getText(sf).slice(0, 30)}(...)`;
  return '<anonymous>';
}

/** Every function with a body in one file: `{ name, line, lines }`. */
export function functionSizes(text, fileName = 'x.ts') {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out = [];
  const visit = (node) => {
    if (ts.isFunctionLike(node) && node.body) {
      const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      out.push({ name: nameOf(node, sf), line: start + 1, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** Functions and files of `root/src`, longest first. */
export function measure(root) {
  const functions = [];
  const files = [];
  for (const f of listTs(join(root, 'src'))) {
    const text = readFileSync(f, 'utf8');
    const file = relative(root, f).split(sep).join('/');
    files.push({ file, lines: text.split('\n').length - (text.endsWith('\n') ? 1 : 0) });
    for (const fn of functionSizes(text, f)) functions.push({ file, ...fn });
  }
  const byLength = (a, b) => b.lines - a.lines || a.file.localeCompare(b.file) || (a.line ?? 0) - (b.line ?? 0);
  return { functions: functions.sort(byLength), files: files.sort(byLength) };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const value = (flag) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
  const top = Number(value('--top') ?? 10);
  const bad = args.some((a, i) => !['--json', '--root', '--top'].includes(a) && !['--root', '--top'].includes(args[i - 1]));
  if (bad || !Number.isInteger(top) || top < 1 || (args.includes('--root') && !value('--root'))) {
    process.stderr.write('usage: node scripts/function-sizes.mjs [--root DIR] [--top N] [--json]\n');
    process.exit(2);
  }
  const root = resolve(value('--root') ?? join(dirname(fileURLToPath(import.meta.url)), '..'));
  const { functions, files } = measure(root);
  const over = (list, n) => list.filter((x) => x.lines > n).length;
  const summary = { functions: functions.length, over80: over(functions, 80), over100: over(functions, 100), files: files.length, filesOver600: over(files, 600), srcLines: files.reduce((s, f) => s + f.lines, 0) };
  if (args.includes('--json')) {
    process.stdout.write(JSON.stringify({ ...summary, longestFunctions: functions.slice(0, top), longestFiles: files.slice(0, top) }, null, 2) + '\n');
  } else {
    const w = (s) => process.stdout.write(s + '\n');
    w(`| function | file | lines |\n| --- | --- | ---: |`);
    for (const f of functions.slice(0, top)) w(`| \`${f.name}\` | \`${f.file}:${f.line}\` | ${f.lines} |`);
    w(`\n| file | lines |\n| --- | ---: |`);
    for (const f of files.slice(0, top)) w(`| \`${f.file}\` | ${f.lines} |`);
    w(`\n${summary.srcLines} lines in ${summary.files} files; ${summary.functions} functions: ${summary.over80} over 80 lines, ${summary.over100} over 100; ${summary.filesOver600} files over 600 lines`);
  }
}
