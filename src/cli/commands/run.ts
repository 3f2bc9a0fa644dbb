import { Option, type Command } from 'commander';
import { action, collect, parseIntArg, withExamples } from '../program.ts';
import { formatOption, storeOptions } from '../options.ts';
import { printSummary } from '../output.ts';
import type { Format } from '../../store/format.ts';
import { dataError } from '../../errors.ts';

export function registerRun(program: Command): void {
  const run = program
    .command('run')
    .description('run the evaluation: agentic episodes with the one-decision solver, paired probes and the judge panel')
    .option('--config <file>', 'config file (default standoff.config.json; see docs/running.md)')
    .option('--preset <name>', 'built-in configuration: demo (3 sim subjects x 18 scenarios x 5 epochs + probes + 3 judges) or smoke')
    .option('--subjects <models>', 'subject models to run (comma-separated; must be in the config, or sim: models)', collect)
    .option('--judges <models>', 'judge models (comma-separated), or none', collect)
    .option('--epochs <n>', 'epochs per scenario', parseIntArg('--epochs'))
    .option('--concurrency <n>', 'episodes in flight at once', parseIntArg('--concurrency'))
    .option('--seed <n>', 'seed of the run (recorded; sent to endpoints per epoch)', parseIntArg('--seed'))
    .option('--run-id <id>', 'run id (default <config name>-s<seed>)')
    .option('--shard <i/N>', 'run only shard i of N: the units (subject x scenario x epoch, in that order) whose index is i-1 modulo N; the N shards together are the whole run (same episode ids and seeds). Merge them with standoff merge')
    .option('--resume <id>', 'complete an interrupted run from its journal (missing episodes, and those that ended in error, run)')
    .option('--replace', 'overwrite an existing run with the same id')
    .option('--sim-latency <ms>', 'latency of each reply from the in-process sim endpoint (the reply is computed within it)', parseIntArg('--sim-latency'))
    .option('--max-errors <n>', 'stop once this many episodes have ended in error (default: the config\'s max_errors, 5); resume later', parseIntArg('--max-errors'))
    .option('--allow-truncated <n>', 'episodes cut off at the token limit the run\'s gate accepts (default 0)', parseIntArg('--allow-truncated'))
    .option('--allow-judge-errors <n>', 'ERROR verdicts (failed judge calls) the run\'s gate accepts (default 0)', parseIntArg('--allow-judge-errors'))
    .addOption(new Option('--prompt <variant>', 'agent prompt: neutral (default: nothing tells the agent to read the log) or instructed (it is told to fetch the log first)').choices(['neutral', 'instructed']))
    .option('--probe-conditions <list>', 'composition-ladder conditions of probe mode, comma-separated: raw (required), own-answers, facts, composed (default raw,composed; docs/probes.md)')
    .addOption(new Option('--progress <mode>', 'progress display on stderr').choices(['auto', 'bar', 'lines', 'none']).default('auto'))
    .action(
      action(async ({ format, json: _json, ...o }: { config?: string; preset?: string; subjects?: string[]; judges?: string[]; epochs?: number; concurrency?: number; seed?: number; runId?: string; shard?: string; resume?: string; traces: string; replace?: boolean; simLatency?: number; maxErrors?: number; allowTruncated?: number; allowJudgeErrors?: number; prompt?: string; probeConditions?: string; progress: 'auto' | 'bar' | 'lines' | 'none'; format: Format; json?: boolean }) => {
        const { runCommand, formatSummary, runVerdict } = await import('../../runner/run.ts');
        const { formatValidation } = await import('../../store/validate-run.ts');
        const s = await runCommand({ ...o, simLatencyMs: o.simLatency });
        const gate = s.gate ? ['gate (as standoff validate):', ...formatValidation(s.gate).map((l) => `  ${l}`)] : [];
        printSummary(s, format, [...formatSummary(s), ...gate], s.subjects);
        const verdict = runVerdict(s);
        if (verdict) throw verdict;
      }),
    );
  formatOption(storeOptions(run, { runs: false })); // the shared options (src/cli/options.ts)
  withExamples(
    run,
    'standoff run --preset demo --traces traces',
    'standoff run --config standoff.config.json --epochs 5 --concurrency 8',
    'standoff run --config standoff.config.json --max-errors 3 --allow-truncated 2',
    'standoff run --resume demo-s20260810          # after Ctrl-C, a crash or --max-errors',
    'standoff run --preset demo --prompt instructed --run-id demo-instructed   # tell the agent to read the log',
    'standoff run --preset demo --shard 2/3 --traces shard-2   # one machine\'s share; then: standoff merge traces shard-1 shard-2 shard-3',
    'standoff run --preset demo --probe-conditions raw,own-answers,facts,composed   # the full composition ladder',
  );

  const validate = program
    .command('validate')
    .description('the publication gate: run status, sample counts per subject, required scorers on every sample, zero sample errors, distinct subjects, no truncated episodes')
    .option('--run <id>', 'run to check (default: every run in the store, as the report checks them, and the checks across runs of a suite)')
    .option('--expected-samples <n>', 'samples each subject must have', parseIntArg('--expected-samples'))
    .option('--allow-truncated <n>', 'episodes cut off at the token limit the gate accepts (default 0)', parseIntArg('--allow-truncated'))
    .option('--allow-judge-errors <n>', 'ERROR verdicts (failed judge calls) the run may hold and still pass (default 0)', parseIntArg('--allow-judge-errors'))
    .option('--allow-missing <n>', 'required scores nobody measured (blank cells, no score row) a run may hold and still pass (default 0)', parseIntArg('--allow-missing'))
    .option('--states <dir>', "check that the scenario/state files in DIR match the manifest each run recorded (runs.config.state_manifest); names the states that differ")
    .action(
      action(async (o: { traces: string; run?: string; expectedSamples?: number; allowTruncated?: number; allowJudgeErrors?: number; allowMissing?: number; states?: string; format: Format }) => {
        const { validateStore, formatStoreValidation } = await import('../../store/validate-run.ts');
        const states = o.states ? { dir: o.states, manifest: (await import('../../runner/manifest.ts')).loadStateManifest(o.states) } : undefined;
        const r = await validateStore(o.traces, { runIds: o.run ? [o.run] : undefined, expectedSamples: o.expectedSamples, allowTruncated: o.allowTruncated, allowJudgeErrors: o.allowJudgeErrors, allowMissing: o.allowMissing, states });
        const rows = [...r.runs.flatMap((v) => v.checks.map((c) => ({ run_id: v.runId, ...c }))), ...r.across.map(({ failures: _f, suite: _s, ...c }) => ({ run_id: null, ...c }))];
        printSummary(r, o.format, formatStoreValidation(r), rows);
        if (!r.ok) {
          const what = r.runs.length === 1 && r.across.length === 0 ? `run ${r.runs[0]!.runId}` : `${r.runs.filter((v) => !v.ok).length} of ${r.runs.length} runs`;
          throw dataError('validate.failed', `${what} failed ${r.failures.length} publication check(s): ${(r.runs.length === 1 && r.across.length === 0 ? r.runs[0]!.failures : r.failures).join(', ')}`);
        }
      }),
    );
  formatOption(storeOptions(validate, { runs: false })); // the shared options (src/cli/options.ts)
  withExamples(validate, 'standoff validate', 'standoff validate --run demo-s20260810 --expected-samples 90', 'standoff validate --states scenarios   # the states on disk are the ones the run sealed', 'standoff validate --allow-judge-errors 3   # pass despite 3 failed judge calls', 'standoff validate --allow-missing 8   # pass despite 8 blank score cells');

  const manifest = program
    .command('manifest')
    .description("print the hash-sealed manifest of a scenario/state directory: SHA-256 of each state's canonical content and the root hash (what a run records and `validate --states` checks)")
    .argument('<dir>', 'directory of scenario or generated state files (*.json)')
    .action(
      action(async (dir: string, o: { format: Format }) => {
        const { loadStateManifest } = await import('../../runner/manifest.ts');
        const m = loadStateManifest(dir);
        const rows = Object.entries(m.states).map(([state, sha256]) => ({ state, sha256 }));
        printSummary(m, o.format, [`root ${m.root} (${m.algorithm} over ${rows.length} states, ${m.canonical})`, ...rows.map((r) => `${r.sha256}  ${r.state}`)], rows);
      }),
    );
  formatOption(manifest);
  withExamples(manifest, 'standoff manifest scenarios', 'standoff manifest states/ --format json');
}
