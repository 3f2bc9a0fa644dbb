/**
 * `standoff plan`: items needed for an effect and the MDE at --items N, from design parameters or
 * estimated from a pilot run (src/decide/plan.ts, src/decide/load-plan.ts); --out FILE.svg draws
 * the power curve.
 */
import { Option, type Command } from 'commander';
import { action, parseIntArg, parseNumberArg, usageError, withExamples } from '../program.ts';
import { formatOption, resamplingOptions, storeOptions } from '../options.ts';
import { printResult } from '../output.ts';
import type { Format } from '../../store/format.ts';

interface PlanCli {
  baseline?: string;
  effect?: string;
  sd?: number;
  epochs?: number;
  icc?: number;
  paired?: boolean;
  discordance?: string;
  power: number;
  alpha: number;
  items?: number;
  traces?: string;
  metric?: string;
  a?: string;
  b?: string;
  task?: string;
  reduce?: 'mean' | 'median' | 'mode' | 'max' | 'min' | 'at_least_one';
  out?: string;
  format: Format;
  seed: number;
  resamples: number;
}

export function registerPlan(program: Command): void {
  const cmd = program
    .command('plan')
    .description('how many items (and epochs) a comparison needs: items for --effect, MDE at --items N; from design parameters, or estimated from a pilot run')
    .option('--baseline <rate>', 'baseline rate of a 0/1 metric (0.7 or 70%)')
    .option('--effect <e>', 'difference to detect, candidate - baseline (5pp, -0.05; for --sd designs in the metric\'s units)')
    .option('--sd <s>', 'continuous metric: SD of an observation (with --paired: of the per-item difference)', parseNumberArg('--sd'))
    .option('--epochs <k>', 'epochs per item (each item a cluster of k observations)', parseIntArg('--epochs'))
    .option('--icc <r>', 'intraclass correlation of an item\'s epochs (default 0)', parseNumberArg('--icc'))
    .option('--paired', 'both runs on the same items, compared pair by pair (as standoff compare)')
    .option('--discordance <q>', 'with --paired, 0/1 metric: share of items the two runs score differently (0.2 or 20%)')
    .option('--power <p>', 'target power', parseNumberArg('--power'), 0.8)
    .option('--alpha <a>', 'two-sided significance level', parseNumberArg('--alpha'), 0.05)
    .option('--items <n>', 'items run: print the MDE at this many', parseIntArg('--items'))
    .option('--metric <name>', 'pilot: the metric')
    .option('--a <subject>', 'pilot: the baseline subject (or run:ID)')
    .option('--b <subject>', 'pilot: the candidate subject (or run:ID)')
    .option('--task <t>', 'pilot: the task (run suite), when the store holds several')
    .addOption(new Option('--reduce <reducer>', 'pilot: reduce epochs per item first').choices(['mean', 'median', 'mode', 'max', 'min', 'at_least_one']))
    .option('--out <file.svg>', 'write the power curve (power against items) as SVG');
  storeOptions(cmd, { runs: false }); // --traces: the pilot's store (with --metric, --a, --b)
  formatOption(cmd);
  resamplingOptions(cmd);
  cmd.action(
    action(async (o: PlanCli) => {
      const { parseAmount } = await import('../../decide/units.ts');
      const amt = (flag: string, v?: string) => (v === undefined ? undefined : parseAmount(flag, v));
      const effect = amt('--effect', o.effect);
      const plan = await import('../../decide/plan.ts');
      let result: object;
      let curve: ((items: number) => number) | null = null;
      let needed: number | null;
      if (o.metric || o.a || o.b) {
        if (!o.traces || !o.metric || !o.a || !o.b) throw usageError('plan.missingArg', 'a pilot needs --metric, --a and --b (its store: --traces, default ./traces)');
        const { loadPilot } = await import('../../decide/load-plan.ts');
        const r = await loadPilot({ traces: o.traces, metric: o.metric, a: o.a, b: o.b, task: o.task, reduce: o.reduce, effect, power: o.power, alpha: o.alpha, seed: o.seed, resamples: o.resamples });
        const { pairedPower } = await import('../../stats/index.ts');
        if (effect !== undefined && r.sd_item > 0) curve = (n) => pairedPower({ n, sdDiff: r.sd_item, effect, alpha: o.alpha });
        needed = r.items_needed;
        result = r;
      } else {
        const inputs = { baseline: amt('--baseline', o.baseline), sd: o.sd, effect, epochs: o.epochs, icc: o.icc, paired: o.paired, discordance: amt('--discordance', o.discordance), power: o.power, alpha: o.alpha, items: o.items };
        const r = plan.buildPlan(inputs);
        if (effect !== undefined && effect !== 0) curve = (n) => plan.planPowerAt(inputs, n);
        needed = r.items_needed;
        result = r;
      }
      printResult(o.format === 'json' ? result : [result], o.format);
      if (o.out) {
        if (!curve) throw usageError('plan.noCurve', '--out needs --effect (the curve is power against items for that effect)');
        const { renderFigure } = await import('../../report/render-figure.ts');
        const { writeFileSync } = await import('node:fs');
        const { storeError } = await import('../../errors.ts');
        const spec = plan.powerCurveSpec(curve, { needed, target: o.power, title: `power to detect ${o.effect}`, maxItems: Math.max(20, Math.ceil((needed ?? o.items ?? 1000) * 2)) });
        const fig = await renderFigure(spec);
        try {
          writeFileSync(o.out, fig.svg);
        } catch (err) {
          throw storeError('plan.write', `cannot write ${o.out}: ${(err as Error).message}`, err);
        }
      }
    }),
  );
  withExamples(
    cmd,
    'standoff plan --baseline 0.7 --effect -5pp                       # two independent runs (R power.prop.test)',
    'standoff plan --baseline 0.7 --effect -5pp --epochs 2 --icc 0.15',
    'standoff plan --baseline 0.7 --effect -5pp --paired --discordance 0.2 --items 500',
    'standoff plan --sd 12 --effect 3 --power 0.9                    # continuous metric (R power.t.test)',
    'standoff plan --traces pilot --metric correct --a model-a --b model-b --effect 3pp --out plan.svg',
  );
}
