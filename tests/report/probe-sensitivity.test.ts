/**
 * `--exclude-states FILE` (sections 3 and 5.4 of "Reading Right, Acting Wrong": audited records kept
 * for a sensitivity analysis): on the committed demo store, the tables without the flagged states,
 * the headline numbers with and without them, the largest change, and the error paths.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { probesFromStore } from '../../src/analysis/ci.ts';
import { parseExcludedStates, renderSensitivity } from '../../src/analysis/probe-sensitivity.ts';
import { ROOT, runCli } from '../helpers/cli.ts';

const traces = join(ROOT, 'traces');
const dir = mkdtempSync(join(tmpdir(), 'standoff-exclude-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('--exclude-states', () => {
  it('parses one id per line, skipping blanks, comments and repeats', () => {
    expect(parseExcludedStates(' a \n\n# audit\nb\r\na\n', 'f.txt')).toEqual(['a', 'b']);
    expect(() => parseExcludedStates('# only a comment\n', 'f.txt')).toThrow(/f.txt: no state ids/);
  });

  it('the tables leave the flagged states out; sensitivity compares with all states and finds the largest change', async () => {
    const ids = ['ct_act_a', 'em_esc_b', "o'brien'); DROP TABLE probe_decisions; --"];
    const all = await probesFromStore({ traces }, { resamples: 200 });
    const r = await probesFromStore({ traces }, { resamples: 200, excludeStates: ids });
    const s = r.sensitivity!;
    expect([s.listed, s.found]).toEqual([3, 2]);
    expect(r.sufficiency!.states).toBe(all.sufficiency!.states - 2);
    for (const g of r.groups) {
      const a = all.groups.find((x) => x.group.subject_model === g.group.subject_model)!;
      // Two states x 5 epochs fewer answers; each row: with = all states, without = the tables shown.
      expect(g.answers).toBe(a.answers - 10);
      for (const m of ['decision_accuracy', 'errors_after_correct_reading'] as const) {
        const row = s.rows.find((x) => x.group.subject_model === g.group.subject_model && x.metric === m)!;
        expect(row.with).toEqual({ rate: a[m].rate, count: a[m].count, n: a[m].n });
        expect(row.without).toEqual({ rate: g[m].rate, count: g[m].count, n: g[m].n });
        expect(row.change).toBeCloseTo(g[m].rate! - a[m].rate!, 12);
      }
    }
    const biggest = Math.max(...s.rows.filter((x) => x.change !== null).map((x) => Math.abs(x.change!)));
    expect(Math.abs(s.largest!.change!)).toBe(biggest);
    const md = renderSensitivity(s, 'subject_model');
    expect(md).toContain('lists 3 state ids; 2 of them are among the probed states');
    expect(md).toMatch(/Largest change: \d+\.\d pp in /);
  }, 60_000);

  it('a flagged list that matches nothing changes nothing', async () => {
    const r = await probesFromStore({ traces }, { resamples: 200, excludeStates: ['no-such-state'] });
    expect(r.sensitivity!.found).toBe(0);
    expect(r.sensitivity!.rows.every((x) => x.change === 0 || x.change === null)).toBe(true);
  }, 60_000);

  it('CLI: a missing file exits 4, an empty one 3, naming the file; probes and report build accept the flag', () => {
    const missing = runCli(['probes', '--traces', traces, '--exclude-states', join(dir, 'nope.txt')]);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toContain('nope.txt: cannot read the --exclude-states file');
    const empty = join(dir, 'empty.txt');
    writeFileSync(empty, '\n# nothing\n');
    const e = runCli(['report', 'build', '--traces', traces, '--out', join(dir, 'rep'), '--exclude-states', empty, '--quiet']);
    expect(e.code).toBe(3);
    expect(e.stderr).toContain('empty.txt: no state ids');
    const flagged = join(dir, 'flagged.txt');
    writeFileSync(flagged, 'ct_act_a\nem_esc_b\n');
    const ok = runCli(['probes', '--traces', traces, '--exclude-states', flagged, '--resamples', '200']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('excluded states: 2 listed, 2 among the probed states');
    expect(ok.stdout).toMatch(/largest change: \d+\.\d pp/);
  }, 120_000);
});
