import { Option, type Command } from 'commander';
import { action, parseIntArg, withExamples } from '../program.ts';
import { formatOption } from '../options.ts';
import { printSummary } from '../output.ts';
import type { Format } from '../../store/format.ts';

export function registerGenerate(program: Command): void {
  const cmd = program
    .command('generate')
    .description('generate fresh procedural decision states (4 rule facts + 4 distractors, sufficiency checked by enumeration)')
    .addOption(new Option('--family <family>', 'procedure family').choices(['refund', 'household']).makeOptionMandatory())
    .requiredOption('--seed <n>', 'seed (each state gets its own seed; dev and test seeds never overlap)', parseIntArg('--seed'))
    .requiredOption('--count <n>', 'number of states', parseIntArg('--count'))
    .requiredOption('--out <dir>', 'directory for the state JSON files (one per state, written atomically)')
    .addOption(new Option('--split <split>', 'dev or test (disjoint seed ranges)').choices(['dev', 'test']).default('test'))
    .action(
      action(async ({ format, json: _json, ...o }: { family: 'refund' | 'household'; seed: number; count: number; out: string; split: 'dev' | 'test'; format: Format; json?: boolean }) => {
        const { runGenerate } = await import('../../runner/generate.ts');
        const s = runGenerate(o);
        const actions = Object.entries(s.actions).map(([a, n]) => `${a} ${n}`).join(', ');
        printSummary(s, format, [`wrote ${s.count} ${s.family} states (${s.split} split, seed ${s.seed}) to ${s.out}: ${actions}`], s.files.map((file) => ({ file })));
      }),
    );
  formatOption(cmd); // the shared options (src/cli/options.ts)
  withExamples(cmd, 'standoff generate --family refund --seed 7 --count 100 --out scenarios-generated/refund-test', 'standoff generate --family household --split dev --seed 1 --count 20 --out /tmp/dev');
}
