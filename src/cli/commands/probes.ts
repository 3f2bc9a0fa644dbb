/**
 * `standoff probes`: paired-probe outcomes over distinct states, with sufficiency, accuracy form,
 * excluded-state sensitivity and error concentration (`src/analysis/ci.ts`).
 */
import type { Command } from 'commander';
import { action, collect, parseIntArg, usageError, withExamples } from '../program.ts';
import { statsOptions, type InputShape, type StatsCommon } from '../options.ts';
import { printResult, printText } from '../output.ts';
import { visibleControls } from '../../escape.ts';

export function registerProbes(program: Command): void {
  const probes = statsOptions(program.command('probes').description('paired-probe outcomes over distinct states: facts right/wrong x action right/wrong with intervals that resample whole states, coverage, composition, the composition ladder (raw -> own answers -> facts -> composed), ambiguous states apart, sufficiency'))
    .option('--by <cols>', 'group by these columns (comma-separated)', collect)
    .option('--concentration', 'also: do facts-right, action-wrong errors fall on the same states across subjects? share on states >= k subjects fail vs a seeded permutation null (--resamples permutations; "Reading Right, Acting Wrong" section 5.3)')
    .option('--exclude-states <file>', 'state ids to leave out (one per line, e.g. from a label audit): the tables are without them, followed by the headline numbers with and without them and the largest change')
    .option('--min-subjects <k>', 'with --concentration: a state is shared when at least k subjects fail it (default: half the subjects, rounded up)', parseIntArg('--min-subjects'))
    .action(
      action(async (o: StatsCommon & InputShape & { by?: string[]; concentration?: boolean; minSubjects?: number; excludeStates?: string }) => {
        const { probesFromStore, sufficiencyText, concentrationText, loadExcludedStates } = await import('../../analysis/ci.ts');
        const { ladderText } = await import('../../analysis/probe-ladder.ts');
        const excludeStates = o.excludeStates === undefined ? undefined : loadExcludedStates(o.excludeStates);
        if (o.minSubjects !== undefined && !o.concentration) throw usageError('probes.minSubjects', '--min-subjects needs --concentration');
        const r = await probesFromStore({ traces: o.traces, runs: o.run }, { by: o.by, level: o.level, seed: o.seed, resamples: o.resamples, concentration: o.concentration, minSubjects: o.minSubjects, excludeStates });
        if (o.format === 'json') return printResult(r, 'json');
        const mark = { cluster: 'cl.', exact: 'ex.', states: 'st.', independent: 'ind.' } as const;
        const pct = (s: { count: number; n: number; rate: number | null; shown: keyof typeof mark; interval: { lower: number | null; upper: number | null } }) =>
          s.rate === null
            ? `- (0/${s.n})`
            : `${(100 * s.rate).toFixed(1)}% (${s.count}/${s.n}) ${mark[s.shown]}[${s.interval.lower === null ? '-' : (100 * s.interval.lower).toFixed(1)}, ${s.interval.upper === null ? '-' : (100 * s.interval.upper).toFixed(1)}]`;
        printResult(
          r.groups.map((g) => ({
            group: g.group,
            states: g.states,
            answers: g.answers,
            'facts right, action right': pct(g.cells.facts_right_action_right),
            'facts right, action wrong': pct(g.cells.facts_right_action_wrong),
            'facts wrong, action right': pct(g.cells.facts_wrong_action_right),
            'facts wrong, action wrong': pct(g.cells.facts_wrong_action_wrong),
            'errors after correct reading': pct(g.errors_after_correct_reading),
            'P(action wrong | facts right)': pct(g.action_wrong_given_facts_right),
            'mean probe accuracy': g.mean_probe_accuracy,
            coverage: g.coverage.rate,
            'composed accuracy': g.composed ? pct(g.composed.composed_accuracy) : null,
            'decision accuracy': pct(g.decision_accuracy),
            'ambiguous states (answers)': g.ambiguous ? `${g.ambiguous.states} (${g.ambiguous.answers})` : 0,
          })),
          o.format,
        );
        if (o.format !== 'csv') {
          printText(
            `\nstates are distinct decision states; each share is out of their answers (state x epoch), and cl. intervals resample whole states (ex.: Clopper-Pearson where each state is answered once; st.: every state has the same outcome, so Clopper-Pearson over the distinct states, each counted once; ind.: Clopper-Pearson over the answers as independent samples although states repeat). Ambiguous states are in no decision or composition denominator.\n`,
          );
        }
        if (o.format !== 'csv' && r.ladder.subjects.length) printText(`\n${ladderText(r.ladder, r.level, (t) => visibleControls(t, ' ')).join('\n')}\n`);
        const s = r.sufficiency;
        if (s && o.format !== 'csv') {
          const plain = (t: string) => visibleControls(t, ' ');
          printText(`probe sufficiency: ${sufficiencyText(s, { strong: (t) => t.toUpperCase(), quote: plain, text: plain })}\n`);
        }
        const af = r.accuracy_form;
        if (af?.spearman && o.format !== 'csv') {
          const n = (x: number | null) => (x === null ? '-' : x.toFixed(2));
          const sp = af.spearman;
          const iv = sp.lower !== null && sp.lower === sp.upper ? 'the bootstrap over subjects has no spread (no interval)' : `${Math.round(sp.level * 100)}% bootstrap over subjects [${n(sp.lower)}, ${n(sp.upper)}]`;
          printText(`accuracy vs errors after correct reading across ${af.used} subjects: Spearman ${n(sp.estimate)}, ${iv}\n`);
        }
        if (r.sensitivity && o.format !== 'csv') {
          const sv = r.sensitivity;
          const f = (x: { rate: number | null; count: number; n: number }) => (x.rate === null ? '-' : `${(100 * x.rate).toFixed(1)}% (${x.count}/${x.n})`);
          printText(`\nexcluded states: ${sv.listed} listed, ${sv.found} among the probed states; the tables above leave them out. With all states -> without:\n`);
          for (const x of sv.rows) printText(`  ${visibleControls(JSON.stringify(x.group))} ${x.metric}: ${f(x.with)} -> ${f(x.without)}${x.change === null ? '' : ` (${x.change >= 0 ? '+' : ''}${(100 * x.change).toFixed(1)} pp)`}\n`);
          printText(sv.largest ? `largest change: ${(100 * Math.abs(sv.largest.change!)).toFixed(1)} pp (${sv.largest.metric}, ${visibleControls(JSON.stringify(sv.largest.group))})\n` : 'largest change: none defined\n');
        }
        if (o.concentration && o.format !== 'csv') {
          const c = r.concentration;
          printText(`error concentration: ${c ? concentrationText(c, (x) => (x === null ? '-' : `${(100 * x).toFixed(1)}%`)) : 'no subject read every fact right on any state, so there is nothing to concentrate'}\n`);
        }
      }),
    );
  withExamples(probes, 'standoff probes', 'standoff probes --by subject_model,decision_type --format json', 'standoff probes --concentration --min-subjects 2 --seed 7', 'standoff probes --exclude-states flagged-states.txt');
}
