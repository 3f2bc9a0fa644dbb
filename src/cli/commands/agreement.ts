/**
 * `standoff agreement`: Krippendorff's alpha with a bootstrap interval over units, of the store's
 * judges or of a ratings file (`src/analysis/ci.ts`, `ci-input.ts`).
 */
import { Option, type Command } from 'commander';
import { action, collect, usageError, withExamples } from '../program.ts';
import { inputFileOptions, MEASURES, statsOptions, type InputShape, type Missing, type StatsCommon } from '../options.ts';
import { printResult } from '../output.ts';

type Measure = (typeof MEASURES)[number];

export function registerAgreement(program: Command): void {
  const agreement = inputFileOptions(
    statsOptions(program.command('agreement').description("Krippendorff's alpha with a bootstrap CI over units (judges over the store, or any file of ratings, long or wide)"))
      .option('--scorer <name>', 'model-graded scorer', 'reasoning_action_alignment')
      .addOption(new Option('--measure <level>', 'measurement level of the ratings').choices(MEASURES).default('nominal'))
      .option('--input <file>', 'a CSV or Parquet file of ratings: long (--unit, --rater, --value) or wide (--raters); an empty rating is missing')
      .option('--unit <cols>', 'with --input: the unit column(s) (long default: unit; wide default: each row is a unit)', collect)
      .option('--rater <col>', 'with --input, long ratings: the rater column (default: rater)')
      .option('--value <col>', 'with --input, long ratings: the rating column (default: value)')
      .option('--raters <cols>', 'with --input, wide ratings: one column per rater (comma-separated)', collect)
      .option('--by <cols>', 'with --input: one alpha per group of these columns', collect),
  )
    .action(
      action(async (o: StatsCommon & InputShape & { scorer: string; measure: Measure; input?: string; unit?: string[]; rater?: string; value?: string; raters?: string[]; by?: string[]; missing: Missing }) => {
        const opts = { level: o.measure, ciLevel: o.level, seed: o.seed, resamples: o.resamples };
        if (!o.input) {
          for (const [flag, v] of [['--by', o.by], ['--unit', o.unit], ['--rater', o.rater], ['--value', o.value], ['--raters', o.raters]] as const) {
            if (v) throw usageError('ci.missingArg', `${flag} goes with --input`);
          }
          const { agreementFromStore } = await import('../../analysis/ci.ts');
          printResult(await agreementFromStore({ traces: o.traces, runs: o.run }, { scorer: o.scorer, ...opts }), o.format);
          return;
        }
        const { agreementInput } = await import('../../analysis/ci-input.ts');
        printResult(await agreementInput(o.input, { ...opts, unit: o.unit, rater: o.rater, value: o.value, raters: o.raters, by: o.by, missing: o.missing, delimiter: o.delimiter, wide: o.wide, subjectsFromColumns: o.subjectsFromColumns }), o.format);
      }),
    );
  withExamples(
    agreement,
    'standoff agreement',
    'standoff agreement --measure ordinal',
    'standoff agreement --input ratings.csv --measure interval --level 0.9 --format json',
    'standoff agreement --input results.csv --unit sample_id,epoch,model --raters judge_a,judge_b,judge_c --measure ordinal',
  );
}
