/**
 * The `standoff` program: each command lives in `src/cli/commands/` and registers itself here
 * (`src/cli/bin.ts` runs it; notebooks parse their `standoff` blocks with the same definitions).
 * Exit codes: 0 ok, 1 internal error, 2 usage/config, 3 data, 4 store/IO, 5 endpoint,
 * 130 interrupted (see src/errors.ts).
 */
import { Command, CommanderError } from 'commander';
import { registerSql } from './commands/sql.ts';
import { registerSchema } from './commands/schema.ts';
import { registerGenerate } from './commands/generate.ts';
import { registerServe } from './commands/serve.ts';
import { registerCi } from './commands/ci/index.ts';
import { registerAgreement } from './commands/agreement.ts';
import { registerJudges } from './commands/judges.ts';
import { registerCosts, registerRerun } from './commands/costs.ts';
import { registerProbes } from './commands/probes.ts';
import { registerIngest } from './commands/ingest/index.ts';
import { registerRun } from './commands/run.ts';
import { registerMerge } from './commands/merge.ts';
import { registerReport } from './commands/report.ts';
import { registerCompare } from './commands/compare.ts';
import { registerPlan } from './commands/plan.ts';
import { registerRank } from './commands/rank.ts';
import { STANDOFF_VERSION } from '../version.ts';
import { usageLine } from './program.ts';

/**
 * The whole command tree. `output` redirects commander's own output (help, usage errors): a
 * notebook block builds its own program with it.
 */
export function buildProgram(output: { writeOut?: (s: string) => void; writeErr?: (s: string) => void } = {}): Command {
  const program = new Command('standoff')
    .description('Run and analyse tool-using AI-agent evaluations with statistics people can trust.')
    .version(STANDOFF_VERSION)
    // Options belong to the command they follow (`ci --format` vs `ci exact --format`).
    .enablePositionalOptions()
    .exitOverride();
  program.configureOutput({
    ...output,
    // One line: "standoff: usage: unknown option '--trace' (did you mean --traces?)".
    outputError: (str, write) => write(`standoff: usage: ${usageLine(str)}\n`),
  });
  registerSql(program);
  registerSchema(program);
  registerGenerate(program);
  registerServe(program);
  registerCi(program);
  registerAgreement(program);
  registerJudges(program);
  registerCosts(program);
  registerRerun(program);
  registerProbes(program);
  registerIngest(program);
  registerReport(program, buildProgram);
  registerRun(program);
  registerMerge(program);
  registerCompare(program);
  registerPlan(program);
  registerRank(program);
  program.addHelpText('after', `\nExit codes: 0 ok, 1 internal error, 2 usage/config, 3 data (also a failed gate), 4 store/IO, 5 endpoint (standoff run), 6 a compare --fail-on condition holds, 130 interrupted.\nEvery command has --help with examples.\n`);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  // `standoff sql ... | head` closes the pipe early: that is not an error.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit 0; everything else commander rejects is a usage error.
      process.exitCode = err.exitCode === 0 ? 0 : 2;
      return;
    }
    throw err;
  }
}
