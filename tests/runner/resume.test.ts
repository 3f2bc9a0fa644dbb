/**
 * Durability: kill -9 mid-run then --resume gives exactly one row per episode (and the same rows
 * as an uninterrupted run); SIGINT exits 130 with the journal intact and the resume command; a
 * torn last journal line is tolerated; a changed config cannot resume.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';
import { query } from '../../src/store/duckdb.ts';
import { parseConfig, type ConfigInput } from '../../src/runner/config.ts';
import { runCommand, runEvaluation } from '../../src/runner/run.ts';
import { journalPath, readJournal } from '../../src/runner/journal.ts';

const REPO = resolve(import.meta.dirname, '..', '..');
const dirs: string[] = [];
const children: ChildProcess[] = [];
let work: string;

const CONFIG: ConfigInput = {
  name: 'durable',
  scenarios: ['em_act_a', 'em_esc_b', 'ct_act_b', 'ct_amb_a', 'fc_esc_a', 'fc_amb_b'],
  subjects: [{ model: 'sim:hasty' }, { model: 'sim:careful' }, { model: 'sim:thorough' }],
  judges: [{ model: 'sim:judge-strict' }, { model: 'sim:judge-lenient' }, { model: 'sim:judge-noisy' }],
  epochs: 2,
  concurrency: 4,
  seed: 5,
  retries: { max: 3, base_ms: 1, max_ms: 10 },
};
const TOTAL = 3 * 6 * 2;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'standoff-resume-'));
  dirs.push(work);
  await writeFile(join(work, 'durable.config.json'), JSON.stringify(CONFIG));
  await writeFile(
    join(work, 'child.mts'),
    [
      `import { runCommand } from ${JSON.stringify(join(REPO, 'src/runner/run.ts'))};`,
      `const [config, traces, latency] = process.argv.slice(2);`,
      `try {`,
      `  const s = await runCommand({ config, traces, progress: 'lines', simLatencyMs: Number(latency) });`,
      `  process.stdout.write(JSON.stringify({ episodes: s.episodes }) + '\\n');`,
      `} catch (e) {`,
      `  process.stderr.write('standoff: ' + e.message + '\\n');`,
      `  process.exitCode = e.exitCode ?? 1;`,
      `}`,
    ].join('\n'),
  );
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const journalUnits = (path: string) => {
  if (!existsSync(path)) return 0;
  const lines = readFileSync(path, 'utf8').split('\n').filter((l) => l.trim() !== '');
  return Math.max(0, lines.length - 1);
};

async function waitFor(cond: () => boolean, timeoutMs: number, what: string) {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function exited(c: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (c.exitCode !== null || c.signalCode !== null) return Promise.resolve({ code: c.exitCode, signal: c.signalCode });
  return new Promise((r) => c.once('exit', (code, signal) => r({ code, signal })));
}

async function rowsOf(traces: string, runId: string) {
  const s = await openStore(traces, { runs: [runId] });
  try {
    const get = async (sql: string) => (await query(s.conn, sql)).rows;
    return {
      runs: await get('SELECT * FROM runs'),
      episodes: await get('SELECT * EXCLUDE (run_id, started_at, latency_ms) FROM episodes'),
      messages: await get('SELECT * EXCLUDE (run_id) FROM messages'),
      scores: await get('SELECT * EXCLUDE (run_id) FROM scores'),
      judgments: await get('SELECT * EXCLUDE (run_id) FROM judgments'),
      probe_answers: await get('SELECT * EXCLUDE (run_id) FROM probe_answers'),
      probe_decisions: await get('SELECT * EXCLUDE (run_id) FROM probe_decisions'),
    };
  } finally {
    s.close();
  }
}

let reference: Awaited<ReturnType<typeof rowsOf>>;
async function referenceRows() {
  if (reference) return reference;
  const traces = join(work, 'reference');
  await runEvaluation({ config: parseConfig(CONFIG), runId: 'durable-s5', traces, progress: 'none', log: () => undefined });
  reference = await rowsOf(traces, 'durable-s5');
  return reference;
}

function expectExact(rows: Awaited<ReturnType<typeof rowsOf>>, ref: Awaited<ReturnType<typeof rowsOf>>) {
  expect(rows.episodes).toHaveLength(TOTAL);
  expect(new Set(rows.episodes.map((e) => e.episode_id)).size).toBe(TOTAL);
  const keys = rows.messages.map((m) => `${m.episode_id}#${m.seq}`);
  expect(new Set(keys).size).toBe(keys.length);
  for (const t of ['episodes', 'messages', 'scores', 'judgments', 'probe_answers', 'probe_decisions'] as const) {
    expect(rows[t], t).toEqual(ref[t]);
  }
}

describe('kill -9 mid-run, then --resume', () => {
  it('completes only the missing episodes: exactly one row per episode, same rows as an uninterrupted run', async () => {
    const traces = join(work, 'killed');
    const jp = journalPath(traces, 'durable-s5');
    const child = spawn('npx', ['tsx', join(work, 'child.mts'), join(work, 'durable.config.json'), traces, '40'], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // own process group: npx, tsx and node are killed together
    });
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    await waitFor(() => journalUnits(jp) >= 6 || child.exitCode !== null, 60_000, 'the journal to fill partway');
    expect(child.exitCode, stderr).toBeNull();
    process.kill(-child.pid!, 'SIGKILL');
    await exited(child);

    const before = await readJournal(jp);
    expect(before.header?.run_id).toBe('durable-s5');
    const saved = before.units.size;
    expect(saved).toBeGreaterThanOrEqual(6);
    expect(saved).toBeLessThan(TOTAL);
    expect(existsSync(join(traces, 'runs', 'run_id=durable-s5'))).toBe(false);

    // resume needs only the run id and the store: the config comes from the journal
    const s = await runCommand({ resume: 'durable-s5', traces, progress: 'none', log: () => undefined, handleSignals: false });
    expect(s.resumedFromJournal).toBe(saved);
    expect(s.ranNow).toBe(TOTAL - saved);
    expect(s.episodes).toBe(TOTAL);
    expect(existsSync(jp)).toBe(false);
    const rows = await rowsOf(traces, 'durable-s5');
    expect(String(rows.runs[0].notes)).toContain(`resumed: ${saved} of ${TOTAL} episodes came from the journal`);
    expectExact(rows, await referenceRows());

    // resuming again: nothing left to resume
    await expect(runCommand({ resume: 'durable-s5', traces, progress: 'none', handleSignals: false })).rejects.toThrow(/already complete/);
  });
});

describe('SIGINT', () => {
  it('exits 130 with the journal intact and says how to resume; the resume completes the run', async () => {
    const traces = join(work, 'sigint');
    const jp = journalPath(traces, 'durable-s5');
    const child = spawn(process.execPath, ['--import', 'tsx', join(work, 'child.mts'), join(work, 'durable.config.json'), traces, '40'], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    await waitFor(() => journalUnits(jp) >= 4 || child.exitCode !== null, 60_000, 'the journal to fill partway');
    child.kill('SIGINT');
    const { code } = await exited(child);
    expect(code, stderr).toBe(130);
    expect(stderr).toContain(`resume with: standoff run --resume durable-s5 --traces ${traces}`);
    const j = await readJournal(jp);
    expect(j.torn).toBe(false);
    expect(j.units.size).toBeGreaterThanOrEqual(4);
    expect(j.units.size).toBeLessThan(TOTAL);
    expect(stderr).toContain(`interrupted: ${j.units.size}/${TOTAL} episodes are saved`);

    const s = await runCommand({ resume: 'durable-s5', traces, progress: 'none', log: () => undefined, handleSignals: false });
    expect(s.episodes).toBe(TOTAL);
    expectExact(await rowsOf(traces, 'durable-s5'), await referenceRows());
  });
});

describe('journal edge cases', () => {
  it('a torn last line is dropped and its episode is run again', async () => {
    const traces = join(work, 'torn');
    const cfg = parseConfig(CONFIG);
    const ac = new AbortController();
    await expect(
      runEvaluation({
        config: cfg,
        runId: 'durable-s5',
        traces,
        progress: 'none',
        log: () => undefined,
        signal: ac.signal,
        onUnit: (done) => {
          if (done >= 5) ac.abort();
        },
      }),
    ).rejects.toMatchObject({ code: 'run.interrupted', kind: 'interrupted', exitCode: 130 });
    const jp = journalPath(traces, 'durable-s5');
    const n = (await readJournal(jp)).units.size;
    // simulate a crash in the middle of a write
    const line = readFileSync(jp, 'utf8').trim().split('\n').at(-1)!;
    await appendFile(jp, line.slice(0, Math.floor(line.length / 2)));
    const torn = await readJournal(jp);
    expect(torn.torn).toBe(true);
    expect(torn.units.size).toBe(n);

    const logs: string[] = [];
    const s = await runCommand({ resume: 'durable-s5', traces, progress: 'none', log: (l) => logs.push(l), handleSignals: false });
    expect(logs.join('\n')).toContain('dropped a torn last line');
    expect(s.resumedFromJournal).toBe(n);
    expectExact(await rowsOf(traces, 'durable-s5'), await referenceRows());
  });

  it('a crash after the commit but before the journal was removed: resume reports completion and cleans up', async () => {
    const traces = join(work, 'committed');
    const small = { ...CONFIG, subjects: [{ model: 'sim:careful' }], judges: [], epochs: 1, probes: false };
    const jp = journalPath(traces, 'durable-s5');
    let saved = '';
    await runEvaluation({
      config: parseConfig(small),
      runId: 'durable-s5',
      traces,
      progress: 'none',
      log: () => undefined,
      onUnit: (done, total) => {
        if (done === total) saved = readFileSync(jp, 'utf8');
      },
    });
    expect(existsSync(jp)).toBe(false);
    await writeFile(jp, saved);
    await expect(runCommand({ resume: 'durable-s5', traces, progress: 'none', handleSignals: false })).rejects.toMatchObject({ code: 'run.alreadyComplete' });
    expect(existsSync(jp)).toBe(false);
  });

  it('a damaged line in the middle is a data error, not silently skipped', async () => {
    const p = join(work, 'bad.jsonl');
    await writeFile(p, '{"kind":"header","version":1}\nnot json\n{"kind":"unit","episode_id":"a","episode":{}}\n');
    await expect(readJournal(p)).rejects.toMatchObject({ code: 'journal.corrupt', kind: 'data' });
  });

  it('a resume with a different configuration is refused; a second fresh start is refused', async () => {
    const traces = join(work, 'changed');
    const ac = new AbortController();
    ac.abort();
    await expect(
      runEvaluation({ config: parseConfig(CONFIG), runId: 'durable-s5', traces, progress: 'none', log: () => undefined, signal: ac.signal }),
    ).rejects.toMatchObject({ code: 'run.interrupted' });
    await expect(
      runCommand({ resume: 'durable-s5', traces, epochs: 3, progress: 'none', handleSignals: false }),
    ).rejects.toMatchObject({ code: 'run.configChanged', kind: 'usage' });
    await expect(
      runEvaluation({ config: parseConfig(CONFIG), runId: 'durable-s5', traces, progress: 'none', log: () => undefined }),
    ).rejects.toMatchObject({ code: 'run.journalExists' });
  });
});
