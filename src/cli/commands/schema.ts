import type { Command } from 'commander';
import { action, withExamples } from '../program.ts';
import { buildSchemaMarkdown } from '../../schema/docs.ts';

export function registerSchema(program: Command): void {
  const cmd = program
    .command('schema')
    .description('print the trace schema (tables, columns, types) as Markdown; docs/schema.md is this output')
    .action(
      action(() => {
        process.stdout.write(buildSchemaMarkdown());
      }),
    );
  withExamples(cmd, 'standoff schema > docs/schema.md');
}
