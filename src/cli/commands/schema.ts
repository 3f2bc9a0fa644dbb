import type { Command } from 'commander';
import { action, withExamples } from '../program.ts';

export function registerSchema(program: Command): void {
  const cmd = program
    .command('schema')
    .description('print the trace schema (tables, columns, types) as Markdown; docs/schema.md is this output')
    .action(
      action(async () => {
        const { buildSchemaMarkdown } = await import('../../schema/docs.ts');
        process.stdout.write(buildSchemaMarkdown());
      }),
    );
  withExamples(cmd, 'standoff schema > docs/schema.md');
}
