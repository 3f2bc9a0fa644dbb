#!/usr/bin/env node
/**
 * `node scripts/check-imports.mjs [--root DIR] [--json] [--graph]`: the import rules of
 * docs/architecture.md, checked over every TypeScript file in `src/` and `verifier/`.
 *
 * - Circles: strongly connected components of the file graph (Tarjan). Every import counts:
 *   static, `export ... from`, type-only (`import type`, `import { type X }`, `import('x').T`) and
 *   dynamic `await import(...)`; a circle through a lazy or type-only import is still a circle a
 *   reader has to untangle. A circle is allowed only when every file of it is listed in
 *   ALLOWED_CYCLES below, with the reason.
 * - Arrows: each file belongs to a room (its first folder under `src/`: `stats`, `store`, ...;
 *   `verifier/` is the room `verifier`; the files directly in `src/` are the room `base`). A room
 *   may import only the rooms MAY_IMPORT lists for it; KNOWN_ARROWS lists, file by file, the
 *   arrows that break this today and are waiting for a move (each with the reason).
 *
 * Exit code 0 when the rules hold, 1 when they do not (each finding on its own line), 2 on a
 * usage error. `--json` prints `{ files, edges, cycles, arrows, allowedCycles, knownArrows }`;
 * `--graph` prints the room-to-room edges with their counts. `--root` checks another tree (the
 * test builds one with a circle and an upward arrow to see the check fail).
 * No dependency beyond the TypeScript compiler the project already type-checks with.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** What each room may import besides itself (docs/architecture.md, "Rooms"). `base` is src/*.ts. */
export const MAY_IMPORT = {
  base: [],
  types: [],
  schema: ['base', 'types'],
  stats: ['base'],
  compute: ['base', 'stats'],
  net: [],
  store: ['base', 'types', 'schema', 'stats'],
  scorers: ['base', 'schema', 'stats', 'store'],
  ingest: ['base', 'types', 'schema', 'stats', 'store', 'scorers'],
  verifier: ['base', 'net'],
  runner: ['base', 'types', 'schema', 'stats', 'store', 'scorers', 'net', 'verifier'],
  analysis: ['base', 'types', 'schema', 'stats', 'compute', 'store', 'scorers'],
  decide: ['base', 'types', 'schema', 'stats', 'compute', 'store', 'scorers', 'analysis'],
  report: ['base', 'types', 'schema', 'stats', 'compute', 'store', 'scorers', 'analysis', 'decide'],
  notebook: ['base', 'types', 'schema', 'stats', 'compute', 'store', 'report'],
  cli: ['base', 'types', 'schema', 'stats', 'compute', 'store', 'scorers', 'ingest', 'runner', 'analysis', 'decide', 'report', 'notebook', 'verifier', 'net'],
};
/** `base` may import only `errors.ts` from stats' point of view: stats imports errors and stats. */
const STATS_BASE_FILES = new Set(['src/errors.ts']);

/** Circles allowed for now, each a set of files (all of the circle's files must be listed). */
export const ALLOWED_CYCLES = [];

/** Arrows against MAY_IMPORT that exist today, `from -> to` file pairs, each with its reason. */
export const KNOWN_ARROWS = [
  { from: 'src/analysis/ci.ts', to: 'src/report/probe-accuracy-form.ts', why: 'the accuracy-form statistic lives with its figure; it belongs in analysis/' },
  { from: 'src/analysis/probe-concentration.ts', to: 'src/report/markdown.ts', why: 'Markdown cell formatting (pct) used by the analysis renderers; markdown.ts belongs below both' },
  { from: 'src/analysis/probe-sensitivity.ts', to: 'src/report/markdown.ts', why: 'Markdown cell formatting used by the analysis renderers; markdown.ts belongs below both' },
  { from: 'src/report/generic.ts', to: 'src/ingest/lm-eval/reconcile.ts', why: 'the reported-vs-recomputed tolerance; it belongs in analysis/ or store/' },
  { from: 'src/report/generic.ts', to: 'src/ingest/reported-metrics.ts', why: 'type of the reported metrics read back from the store; it belongs in schema/' },
  { from: 'src/report/index.ts', to: 'src/notebook/notebook.ts', why: 'the report barrel re-exports runNotebook for library users; notebook imports report, not the other way' },
];

const HERE = dirname(fileURLToPath(import.meta.url));

function listTs(dir) {
  if (!existsSync(dir)) return [];
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...listTs(p));
    else if (name.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** The imports of one file: `{ spec, typeOnly, dynamic }`. */
export function parseImports(text, fileName = 'x.ts') {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const out = [];
  const visit = (node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const c = node.importClause;
      const named = c?.namedBindings && ts.isNamedImports(c.namedBindings) ? c.namedBindings.elements : null;
      const typeOnly = !!c && (c.isTypeOnly || (!c.name && !!named && named.length > 0 && named.every((e) => e.isTypeOnly)));
      out.push({ spec: node.moduleSpecifier.text, typeOnly, dynamic: false });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : null;
      const typeOnly = node.isTypeOnly || (!!named && named.length > 0 && named.every((e) => e.isTypeOnly));
      out.push({ spec: node.moduleSpecifier.text, typeOnly, dynamic: false });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteralLike(node.arguments[0])) {
      out.push({ spec: node.arguments[0].text, typeOnly: false, dynamic: true });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      out.push({ spec: node.argument.literal.text, typeOnly: true, dynamic: false });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** The room of a repository-relative path (see the module comment); null outside src/ and verifier/. */
export function roomOf(rel) {
  const parts = rel.split('/');
  if (parts[0] === 'verifier') return 'verifier';
  if (parts[0] !== 'src') return null;
  return parts.length === 2 ? 'base' : parts[1];
}

function resolveSpec(fromAbs, spec, known) {
  if (!spec.startsWith('.')) return null;
  const base = resolve(dirname(fromAbs), spec);
  for (const c of [base, base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')]) if (known.has(c)) return c;
  return null;
}

/** Tarjan's strongly connected components; returns those with more than one file or a self-import. */
function cycles(nodes, adj) {
  let index = 0;
  const idx = new Map(), low = new Map(), on = new Set(), stack = [], out = [];
  const strong = (v) => {
    idx.set(v, index); low.set(v, index); index++; stack.push(v); on.add(v);
    for (const w of adj.get(v) ?? []) {
      if (!idx.has(w)) { strong(w); low.set(v, Math.min(low.get(v), low.get(w))); }
      else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const comp = [];
      let w;
      do { w = stack.pop(); on.delete(w); comp.push(w); } while (w !== v);
      if (comp.length > 1 || (adj.get(v) ?? new Set()).has(v)) out.push(comp.sort());
    }
  };
  for (const v of nodes) if (!idx.has(v)) strong(v);
  return out.sort((a, b) => a[0].localeCompare(b[0]));
}

/** Checks the tree under `root`; returns the findings (see the module comment). */
export function checkImports(root) {
  const files = [...listTs(join(root, 'src')), ...listTs(join(root, 'verifier'))];
  const known = new Set(files);
  const rel = (p) => relative(root, p).split(sep).join('/');
  const edges = [];
  const adj = new Map();
  for (const f of files) {
    const targets = new Set();
    for (const imp of parseImports(readFileSync(f, 'utf8'), f)) {
      const to = resolveSpec(f, imp.spec, known);
      if (!to) continue;
      targets.add(rel(to));
      edges.push({ from: rel(f), to: rel(to), typeOnly: imp.typeOnly, dynamic: imp.dynamic });
    }
    adj.set(rel(f), targets);
  }
  const allowedCycle = (c) => ALLOWED_CYCLES.some((a) => c.every((f) => a.files.includes(f)));
  const found = cycles(files.map(rel), adj);
  const knownArrow = (e) => KNOWN_ARROWS.some((k) => k.from === e.from && k.to === e.to);
  const arrows = [];
  const seen = new Set();
  for (const e of edges) {
    const a = roomOf(e.from), b = roomOf(e.to);
    if (a === b || seen.has(`${e.from} ${e.to}`)) continue;
    seen.add(`${e.from} ${e.to}`);
    const may = MAY_IMPORT[a];
    let why = null;
    if (!may) why = `room "${a}" is not in MAY_IMPORT`;
    else if (!may.includes(b)) why = `${a} may not import ${b}`;
    else if (a === 'stats' && b === 'base' && !STATS_BASE_FILES.has(e.to)) why = 'stats imports only errors.ts and stats';
    if (why) arrows.push({ from: e.from, to: e.to, why, known: knownArrow(e) });
  }
  return {
    files: files.length,
    edges,
    cycles: found.filter((c) => !allowedCycle(c)),
    allowedCycles: found.filter(allowedCycle),
    arrows: arrows.filter((a) => !a.known),
    knownArrows: arrows.filter((a) => a.known),
  };
}

function roomGraph(edges) {
  const n = new Map();
  for (const e of edges) {
    const k = `${roomOf(e.from)} -> ${roomOf(e.to)}`;
    if (roomOf(e.from) !== roomOf(e.to)) n.set(k, (n.get(k) ?? 0) + 1);
  }
  return [...n].sort((a, b) => a[0].localeCompare(b[0])).map(([k, v]) => `${k} (${v})`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--root');
  if (args.some((a, i) => !['--json', '--graph', '--root'].includes(a) && args[i - 1] !== '--root') || (at >= 0 && !args[at + 1])) {
    process.stderr.write('usage: node scripts/check-imports.mjs [--root DIR] [--json] [--graph]\n');
    process.exit(2);
  }
  const root = at >= 0 ? resolve(args[at + 1]) : join(HERE, '..');
  const r = checkImports(root);
  if (args.includes('--json')) process.stdout.write(JSON.stringify({ ...r, edges: r.edges.length }, null, 2) + '\n');
  else if (args.includes('--graph')) process.stdout.write(roomGraph(r.edges).join('\n') + '\n');
  else {
    for (const c of r.cycles) process.stdout.write(`circle: ${c.join(' -> ')} -> ${c[0]}\n`);
    for (const a of r.arrows) process.stdout.write(`arrow: ${a.from} -> ${a.to} (${a.why})\n`);
    process.stdout.write(`${r.files} files, ${r.edges.length} imports: ${r.cycles.length} circles, ${r.arrows.length} arrows against the rooms` +
      ` (${r.allowedCycles.length} allowed circles, ${r.knownArrows.length} known arrows listed in scripts/check-imports.mjs)\n`);
  }
  process.exit(r.cycles.length || r.arrows.length ? 1 : 0);
}
