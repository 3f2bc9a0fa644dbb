/**
 * `standoff ingest`: the parent of `ingest csv`, `ingest inspect` and `ingest lm-eval`, one file
 * each in this folder.
 */
import type { Command } from 'commander';
import { withExamples } from '../../program.ts';
import { registerIngestCsv } from './csv.ts';
import { registerIngestInspect } from './inspect.ts';
import { registerIngestLmEval } from './lm-eval.ts';

export function registerIngest(program: Command): void {
  const ingest = withExamples(
    program.command('ingest').description('bring outside results into the trace store (validated, all-or-nothing)'),
    'standoff ingest csv results.csv --map map.json',
    'standoff ingest inspect logs/',
    'standoff ingest lm-eval out/',
  );

  registerIngestCsv(ingest);
  registerIngestInspect(ingest);
  registerIngestLmEval(ingest);
}
