/**
 * Screenshots of the report's first screen (1280 x 900) for each kind of store, to check by eye
 * (issue 21, "Done means"): the demo store (`traces/`), a natural CSV with two tasks (two files of
 * tests/helpers/natural-csv.ts's rows, one task each), every Inspect log in tests/fixtures/inspect
 * (one store each) and the real lm-eval fixtures in tests/fixtures/lm-eval (one store).
 *
 *   npx tsx scripts/first-screens.ts OUT_DIR [--resamples N] [--only NAME]
 *
 * Each report is built with the CLI from source into a fresh /tmp directory (kept; its path is
 * printed), then Debian's Chromium (`/usr/bin/chromium`, or STANDOFF_CHROMIUM) driven by
 * playwright-core opens its index.html offline and writes OUT_DIR/NAME.png. The PNGs are for
 * looking at, not for the repository. Exit 0 when every screenshot was written, 4 otherwise.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { naturalCsv, naturalRows } from '../tests/helpers/natural-csv.ts';

const ROOT = resolve(import.meta.dirname, '..');
const CHROMIUM = process.env.STANDOFF_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const VIEWPORT = { width: 1280, height: 900 };

interface Options {
  out: string;
  resamples: string;
  only: string | null;
}

function parseArgs(argv: string[]): Options {
  const o: Options = { out: '', resamples: '1000', only: null };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--resamples') o.resamples = argv[++i] ?? '';
    else if (argv[i] === '--only') o.only = argv[++i] ?? null;
    else if (!o.out) o.out = argv[i];
  }
  if (!o.out || !/^\d+$/.test(o.resamples)) {
    process.stderr.write('usage: npx tsx scripts/first-screens.ts OUT_DIR [--resamples N] [--only NAME]\n');
    process.exit(2);
  }
  return o;
}

/** The CLI from source; stops the script with its stderr when it fails. */
function standoff(args: string[]): void {
  execFileSync(process.execPath, [join(ROOT, 'bin', 'standoff.js'), ...args], { cwd: ROOT, env: { ...process.env, STANDOFF_FROM_SOURCE: '1' }, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** A store to report: its name and how to fill it (null: an existing store). */
interface Store {
  name: string;
  traces: string;
  fill: (() => void) | null;
}

function stores(work: string): Store[] {
  const out: Store[] = [{ name: 'demo', traces: join(ROOT, 'traces'), fill: null }];
  out.push({
    name: 'csv-tasks',
    traces: join(work, 'csv-tasks'),
    fill() {
      // Two tasks: the natural rows split by item, one file (and so one suite, the file's name) each.
      const rows = naturalRows();
      for (const [task, keep] of [['arithmetic', 0], ['facts', 1]] as const) {
        const file = join(work, `${task}.csv`);
        writeFileSync(file, naturalCsv(rows.filter((r) => Number(r.sample_id.replace(/\D/g, '')) % 2 === keep)));
        standoff(['ingest', 'csv', file, '--traces', join(work, 'csv-tasks'), '--run-id', task, '--subject', 'model', '--item', 'sample_id', '--epoch', 'epoch', '--scores', 'correct,quality', '--judge-columns', 'judge_a,judge_b,judge_c', '--judged-scorer', 'quality']);
      }
    },
  });
  const inspect = join(ROOT, 'tests', 'fixtures', 'inspect');
  for (const f of readdirSync(inspect).filter((x) => x.endsWith('.eval')).sort()) {
    const traces = join(work, `inspect-${f.replace(/\.eval$/, '')}`);
    out.push({ name: `inspect-${f.replace(/\.eval$/, '')}`, traces, fill: () => standoff(['ingest', 'inspect', join(inspect, f), '--traces', traces]) });
  }
  const lmEval = join(ROOT, 'tests', 'fixtures', 'lm-eval');
  const lmTraces = join(work, 'lm-eval');
  out.push({
    name: 'lm-eval',
    traces: lmTraces,
    fill: () => {
      for (const d of readdirSync(lmEval, { withFileTypes: true }).filter((x) => x.isDirectory()).map((x) => x.name).sort()) standoff(['ingest', 'lm-eval', join(lmEval, d), '--traces', lmTraces]);
    },
  });
  return out;
}

async function main(): Promise<number> {
  const o = parseArgs(process.argv.slice(2));
  if (!existsSync(CHROMIUM)) {
    process.stderr.write(`no Chromium at ${CHROMIUM} (apt-get install chromium, or set STANDOFF_CHROMIUM)\n`);
    return 4;
  }
  mkdirSync(o.out, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'standoff-first-screens-'));
  process.stdout.write(`stores and reports in ${work}\n`);
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: 120_000 });
  let failed = 0;
  try {
    for (const s of stores(work).filter((x) => o.only === null || x.name === o.only)) {
      try {
        s.fill?.();
        const report = join(work, `report-${s.name}`);
        standoff(['report', 'build', '--traces', s.traces, '--out', report, '--resamples', o.resamples, '--quiet']);
        const page = await browser.newPage({ viewport: VIEWPORT, deviceScaleFactor: 1, offline: true });
        await page.goto(`file://${join(report, 'index.html')}`, { waitUntil: 'load' });
        await page.waitForTimeout(1500);
        const png = resolve(o.out, `${s.name}.png`);
        await page.screenshot({ path: png, fullPage: false });
        await page.close();
        process.stdout.write(`${s.name}: ${png} (report ${report})\n`);
      } catch (err) {
        failed++;
        process.stderr.write(`${s.name}: ${(err as Error).message.split('\n')[0]}\n`);
      }
    }
  } finally {
    await browser.close();
  }
  return failed ? 4 : 0;
}

main().then((code) => process.exit(code));
