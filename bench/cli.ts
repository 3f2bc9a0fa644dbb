/**
 * `npm run bench -- cli`: whole-process start-up of the shipped `standoff` command (node
 * bin/standoff.js, the compiled dist/ build) against `node -e 0` measured in the same run,
 * interleaved round by round so machine load hits every case alike. Targets (issue 15):
 * `--version` and `ci exact --successes 20 --trials 90` within +0.15 s of `node -e 0`,
 * `sql "select 1"` (DuckDB load + store open) within +0.35 s. Medians of ROUNDS runs; the load
 * average is printed with the figures, since other work on the machine inflates them. Both launch
 * paths of the README are measured: the installed command (the bin run through its shebang, as
 * `npm link` / `npm install -g` install it) and `npx --no-install standoff` (npm's launcher).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'standoff.js');
const ROUNDS = Number(process.env.BENCH_CLI_ROUNDS ?? 15);

interface Case {
  name: string;
  /** The program run (default: node itself). */
  cmd?: string;
  args: string[];
  /** Allowed seconds over `node -e 0`. */
  target?: number;
}

const CASES: Case[] = [
  { name: 'node -e 0', args: ['-e', '0'] },
  { name: 'standoff --version', args: [BIN, '--version'], target: 0.15 },
  // The two launch paths of the README: the installed command (npm link / npm install -g run the
  // bin through its shebang) and npm's launcher, which costs about a second a call.
  { name: 'standoff --version (installed: bin via its shebang)', cmd: BIN, args: ['--version'] },
  { name: 'npx --no-install standoff --version', cmd: 'npx', args: ['--no-install', 'standoff', '--version'] },
  { name: 'standoff ci exact --successes 20 --trials 90', args: [BIN, 'ci', 'exact', '--successes', '20', '--trials', '90'], target: 0.15 },
  { name: 'standoff sql "select 1"', args: [BIN, 'sql', 'select 1'], target: 0.35 },
];

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** GNU time, when installed, adds each run's CPU time (user + system): steadier than wall time on a busy machine. */
const GNU_TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;

function once(c: Case): { wall: number; cpu: number | null } {
  const program = c.cmd ?? process.execPath;
  const [cmd, args] = GNU_TIME ? [GNU_TIME, ['-f', 'cpu %U %S', program, ...c.args]] : [program, c.args];
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8' });
  const wall = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`${c.name} failed: ${r.stderr}`);
  const m = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(r.stderr);
  return { wall, cpu: m ? Number(m[1]) + Number(m[2]) : null };
}

export async function benchCli() {
  // The bench measures the build users run: bring dist/ up to date first (else the bin runs the sources).
  const b = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs'), '--if-stale'], { cwd: ROOT, encoding: 'utf8' });
  if (b.status !== 0) throw new Error(`build failed: ${b.stderr}`);
  const loadBefore = loadavg();
  for (const c of CASES) once(c); // warm the file cache
  const times = new Map<string, { wall: number; cpu: number | null }[]>(CASES.map((c) => [c.name, []]));
  for (let i = 0; i < ROUNDS; i++) for (const c of CASES) times.get(c.name)!.push(once(c));
  const loadAfter = loadavg();
  const wall = (name: string) => median(times.get(name)!.map((t) => t.wall));
  const cpu = (name: string) => (GNU_TIME ? median(times.get(name)!.map((t) => t.cpu ?? NaN)) : null);
  const base = wall('node -e 0');
  const baseCpu = cpu('node -e 0');
  const rows = CASES.map((c) => {
    const m = wall(c.name);
    const u = cpu(c.name);
    return {
      name: c.name,
      medianS: +m.toFixed(3),
      overS: +(m - base).toFixed(3),
      ratio: +(m / base).toFixed(2),
      cpuS: u === null ? null : +u.toFixed(3),
      cpuOverS: u === null || baseCpu === null ? null : +(u - baseCpu).toFixed(3),
      target: c.target ?? null,
      ok: c.target === undefined ? null : m - base <= c.target,
    };
  });
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  for (const r of rows) {
    process.stdout.write(
      `${r.name}: ${r.medianS.toFixed(3)} s (median of ${ROUNDS}) = node -e 0 + ${r.overS.toFixed(3)} s, ratio ${r.ratio}` +
        (r.cpuS === null ? '' : `; CPU ${r.cpuS.toFixed(3)} s (+${r.cpuOverS!.toFixed(3)} s)`) +
        (r.target === null ? (r.name === 'node -e 0' ? ' [baseline]' : ' [launch path, no target]') : ` [target <= +${r.target} s: ${r.ok ? 'ok' : 'MISSED'}]`) +
        '\n',
    );
  }
  process.stdout.write(`load average (1, 5, 15 min): before ${load(loadBefore)}, after ${load(loadAfter)}; ${availableParallelism()} cores\n`);
  return { rounds: ROUNDS, loadBefore, loadAfter, cases: rows };
}

