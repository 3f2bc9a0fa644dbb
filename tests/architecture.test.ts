/**
 * The import rules of docs/architecture.md hold (scripts/check-imports.mjs): no import circle in
 * src/ or verifier/ outside the script's documented allow-list, and no arrow against the rooms
 * outside its list of known arrows. The check is also run on a small tree that breaks each rule,
 * to see it fail.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ALLOWED_CYCLES, KNOWN_ARROWS, checkImports, parseImports } from '../scripts/check-imports.mjs';

const ROOT = join(import.meta.dirname, '..');
const SCRIPT = join(ROOT, 'scripts', 'check-imports.mjs');


const run = (...args: string[]) => spawnSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8' });

describe('import rules of the repository', () => {
  const r = checkImports(ROOT);

  it('has no import circle, and the allow-list is empty (issue 21: no circles in the report rooms)', () => {
    expect(r.files).toBeGreaterThan(100);
    expect(r.cycles).toEqual([]);
    expect(ALLOWED_CYCLES).toEqual([]);
    // An allowed circle that is gone must leave the list.
    expect(r.allowedCycles.length).toBe(ALLOWED_CYCLES.length);
  });

  it('has no arrow against the rooms outside the known list, and every known arrow still exists', () => {
    expect(r.arrows).toEqual([]);
    const known = r.knownArrows.map((a) => `${a.from} -> ${a.to}`).sort();
    expect(known).toEqual(KNOWN_ARROWS.map((a) => `${a.from} -> ${a.to}`).sort());
    // The only known arrows: analysis -> report (formatting, one statistic), report -> ingest, report -> notebook.
    for (const a of r.knownArrows) expect(`${a.from.split('/')[1]}->${a.to.split('/')[1]}`).toMatch(/^(analysis->report|report->ingest|report->notebook)$/);
  });

  it('exits 0 on the repository and says so', () => {
    const p = run();
    expect(p.stderr).toBe('');
    expect(p.stdout).toMatch(/: 0 circles, 0 arrows against the rooms/);
    expect(p.status).toBe(0);
  });
});

describe('the check fails when a rule is broken', () => {
  const tree = mkdtempSync(join(tmpdir(), 'standoff-imports-'));
  afterAll(() => rmSync(tree, { recursive: true, force: true }));
  const file = (rel: string, text: string) => {
    mkdirSync(dirname(join(tree, rel)), { recursive: true });
    writeFileSync(join(tree, rel), text);
  };
  // A circle closed by a type-only import, a lazy circle in the CLI, stats and store importing upward,
  // the verifier importing the runner.
  file('src/errors.ts', 'export const e = 1;\n');
  file('src/stats/a.ts', "import { b } from './b.ts';\nimport { e } from '../errors.ts';\nexport const a = b + e;\n");
  file('src/stats/b.ts', "import type { A } from './c.ts';\nexport const b = 1;\nexport type B = A;\n");
  file('src/stats/c.ts', "export { a } from './a.ts';\nexport type A = number;\n");
  file('src/stats/d.ts', "import { r } from '../runner/r.ts';\nimport { paths } from '../paths.ts';\nexport const d = r + paths;\n");
  file('src/paths.ts', 'export const paths = 1;\n');
  file('src/runner/r.ts', 'export const r = 1;\n');
  file('src/store/s.ts', "import { rep } from '../report/rep.ts';\nexport const s = rep;\n");
  file('src/report/rep.ts', 'export const rep = 1;\n');
  file('src/cli/main.ts', "import { reg } from './commands/x.ts';\nexport const build = () => reg;\n");
  file('src/cli/commands/x.ts', "export const reg = async () => (await import('../main.ts')).build;\n");
  file('verifier/server.ts', "import { r } from '../src/runner/r.ts';\nexport const v = r;\n");

  it('finds every circle (type-only and dynamic imports count) and every upward arrow', () => {
    const r = checkImports(tree);
    expect(r.cycles).toEqual([
      ['src/cli/commands/x.ts', 'src/cli/main.ts'],
      ['src/stats/a.ts', 'src/stats/b.ts', 'src/stats/c.ts'],
    ]);
    expect(r.arrows.map((a) => `${a.from} -> ${a.to}: ${a.why}`)).toEqual([
      'src/stats/d.ts -> src/runner/r.ts: stats may not import runner',
      'src/stats/d.ts -> src/paths.ts: stats imports only errors.ts and stats',
      'src/store/s.ts -> src/report/rep.ts: store may not import report',
      'verifier/server.ts -> src/runner/r.ts: verifier may not import runner',
    ]);
  });

  it('exits 1 naming each finding on its own line', () => {
    const p = run('--root', tree);
    expect(p.status).toBe(1);
    expect(p.stdout).toContain('circle: src/cli/commands/x.ts -> src/cli/main.ts -> src/cli/commands/x.ts\n');
    expect(p.stdout).toContain('arrow: src/store/s.ts -> src/report/rep.ts (store may not import report)\n');
    expect(p.stdout).toMatch(/: 2 circles, 4 arrows against the rooms/);
  });

  it('exits 2 on a usage error', () => {
    expect(run('--bogus').status).toBe(2);
  });
});

describe('parseImports', () => {
  it('reads static, re-export, type-only, import-type and dynamic imports', () => {
    const text = [
      "import { a } from './a.ts';",
      "import type { B } from './b.ts';",
      "import { type C } from './c.ts';",
      "import { type D, e } from './d.ts';",
      "export { f } from './f.ts';",
      "export type { G } from './g.ts';",
      "let h: import('./h.ts').H;",
      "const i = () => import('./i.ts');",
      "import 'node:fs';",
    ].join('\n');
    expect(parseImports(text)).toEqual([
      { spec: './a.ts', typeOnly: false, dynamic: false },
      { spec: './b.ts', typeOnly: true, dynamic: false },
      { spec: './c.ts', typeOnly: true, dynamic: false },
      { spec: './d.ts', typeOnly: false, dynamic: false },
      { spec: './f.ts', typeOnly: false, dynamic: false },
      { spec: './g.ts', typeOnly: true, dynamic: false },
      { spec: './h.ts', typeOnly: true, dynamic: false },
      { spec: './i.ts', typeOnly: false, dynamic: true },
      { spec: 'node:fs', typeOnly: false, dynamic: false },
    ]);
  });
});
