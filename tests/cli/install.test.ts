/**
 * Installable: `npm pack` (its prepack builds dist/ from scratch), the tarball installed into a
 * temporary global prefix, and the installed `standoff` run from another working directory: it
 * finds its compiled code, scenarios (a sim run), fonts (the report's PNGs) and notebooks.
 *
 * Offline install: `npm install -g standoff-0.1.0.tgz` resolves the package's dependencies from
 * registry metadata, which a test may not fetch. The test does the same install from npm's cache:
 * the tarball is unpacked where `npm install -g` puts it (`<prefix>/lib/node_modules/standoff`),
 * its dependencies are installed there with `npm ci --omit=dev --offline` at the lockfile's exact
 * versions, and `<prefix>/bin/standoff` links to its bin, as npm links it.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/cli.ts';

let tmp: string;
let pkg: string;
let standoff: string;
let work: string;
let files: string[];

const sh = (cmd: string, args: string[], opts: SpawnSyncOptions = {}) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 400_000, ...opts, env: { ...process.env, NO_COLOR: '1', ...opts.env } });
  return { code: r.status ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
};

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'standoff-install-'));
  // Pack a copy of the checkout, so prepack's clean build does not touch the dist/ other tests run.
  const checkout = join(tmp, 'checkout');
  mkdirSync(checkout);
  for (const e of ['bin', 'scripts', 'src', 'verifier', 'scenarios', 'assets', 'notebooks', 'docs', 'package.json', 'package-lock.json', 'README.md']) {
    cpSync(join(ROOT, e), join(checkout, e), { recursive: true });
  }
  symlinkSync(join(ROOT, 'node_modules'), join(checkout, 'node_modules'));
  const pack = sh('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: checkout });
  if (pack.code !== 0) throw new Error(`npm pack failed: ${pack.stderr}`);
  const info = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('[')))[0];
  files = info.files.map((f: { path: string }) => f.path);

  const prefix = join(tmp, 'prefix');
  pkg = join(prefix, 'lib', 'node_modules', 'standoff');
  mkdirSync(join(prefix, 'bin'), { recursive: true });
  mkdirSync(pkg, { recursive: true });
  const untar = sh('tar', ['xzf', join(tmp, info.filename), '-C', pkg, '--strip-components=1']);
  if (untar.code !== 0) throw new Error(untar.stderr);
  cpSync(join(ROOT, 'package-lock.json'), join(pkg, 'package-lock.json'));
  const install = sh('npm', ['ci', '--omit=dev', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: pkg });
  if (install.code !== 0) throw new Error(`npm ci in the installed package failed: ${install.stderr}`);
  standoff = join(prefix, 'bin', 'standoff');
  symlinkSync(join('..', 'lib', 'node_modules', 'standoff', 'bin', 'standoff.js'), standoff);

  // Another working directory, with a copy of the demo store.
  work = join(tmp, 'my-eval');
  mkdirSync(work);
  cpSync(join(ROOT, 'traces'), join(work, 'demo-traces'), { recursive: true });
}, 600_000);

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const run = (args: string[]) => sh(standoff, args, { cwd: work });

describe('npm pack', () => {
  it('ships the compiled CLI and its data, not the sources or tests', () => {
    for (const f of ['bin/standoff.js', 'dist/cli.js', 'dist/workers/sim-worker.js', 'assets/fonts/DejaVuSans.ttf', 'notebooks/hasty-without-evidence.md', 'scenarios/em_act_a.json', 'docs/notebooks.md', 'README.md']) {
      expect(files).toContain(f);
    }
    expect(files.filter((f) => /^(src|tests|bench|traces|reports)\//.test(f) || f.endsWith('.ts'))).toEqual([]);
    // prepack built dist/ from scratch: every chunk in the package is one the CLI can import.
    const meta = JSON.parse(readFileSync(join(pkg, 'dist', 'meta.json'), 'utf8'));
    const chunks = files.filter((f) => f.startsWith('dist/chunks/'));
    expect(chunks.sort()).toEqual(Object.keys(meta.outputs).filter((o) => o.startsWith('dist/chunks/')).sort());
  });
});

describe('the installed standoff, from another directory', () => {
  it('ci exact: the Clopper-Pearson interval (R: binom.test(20, 90)$conf.int = 0.1413368985, 0.3221268123)', () => {
    const r = run(['ci', 'exact', '--successes', '20', '--trials', '90', '--format', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const ci = JSON.parse(r.stdout);
    expect(ci.lower).toBeCloseTo(0.1413368985, 9);
    expect(ci.upper).toBeCloseTo(0.3221268123, 9);
    expect(existsSync(join(pkg, 'src'))).toBe(false); // so the bin runs dist/, never a fallback
  });

  it('report build --traces <demo copy> --out <dir>: the committed report, with rendered figures (fonts found)', () => {
    const out = join(tmp, 'report');
    const r = run(['report', 'build', '--traces', 'demo-traces', '--out', out, '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    for (const f of ['REPORT.md', 'results.json']) expect(readFileSync(join(out, f), 'utf8'), f).toBe(readFileSync(join(ROOT, 'reports', f), 'utf8'));
    const pngs = readdirSync(join(out, 'figures')).filter((f) => f.endsWith('.png'));
    expect(pngs.length).toBeGreaterThan(3);
    for (const p of pngs) expect(statSync(join(out, 'figures', p)).size, p).toBeGreaterThan(10_000);
  });

  it('run --preset smoke: finds the shipped scenarios and starts the compiled sim worker thread', () => {
    const r = run(['run', '--preset', 'smoke', '--traces', 'smoke-traces', '--progress', 'none', '--format', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s.episodes).toBe(9);
    expect(s.sim.requests).toBeGreaterThan(0); // answered by the sim endpoint in its worker thread (concurrency > 1)
  });

  it('notebook run NAME: finds the shipped notebook', () => {
    const r = run(['notebook', 'run', 'hasty-without-evidence', '--traces', 'demo-traces', '--out', 'nb', '--resamples', '200']);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(work, 'nb', 'hasty-without-evidence.md'), 'utf8')).toContain('| group.subject_model | group.decision_type |');
  });
});
