import { createInterface } from 'node:readline';
import { existsSync, readFileSync, appendFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { action, withExamples } from '../program.ts';
import { formatOption, storeOptions } from '../options.ts';
import { printResult, printTable, printText } from '../output.ts';
import { DEFAULT_MAX_ROWS, formatResult, FORMATS, type Format } from '../../store/format.ts';
import type { TableName } from '../../schema/tables.ts';
import { oneLine } from '../../errors.ts';
import { reportError } from '../program.ts';
import { terminalLine } from '../../escape.ts';

export function registerSql(program: Command): void {
  const cmd = program
    .command('sql')
    .description('run read-only SQL over the trace store (no query: interactive REPL)')
    .argument('[query]', 'SQL to run; tables: runs, episodes, messages, scores, judgments, probe_answers, probe_decisions, aggregates')
    .option('-o, --out <file>', 'write the result to FILE.csv|.json|.parquet|.arrow instead of printing (streamed; not inside the store)')
    .option('--max-rows <n>', `table format: rows shown before "... N more rows" (default ${DEFAULT_MAX_ROWS})`, parsePositiveInt('--max-rows'))
    .option('--csv-safe', "csv: prefix cells that start with = + - @ (a spreadsheet formula) with ' (default for --out FILE.csv)")
    .option('--no-csv-safe', 'csv: write cells exactly as stored, also for --out FILE.csv')
    .action(
      action(async (q: string | undefined, opts: { traces: string; format: Format; out?: string; run?: string[]; maxRows?: number; csvSafe?: boolean }) => {
        if (q === undefined) return repl(opts.traces, opts.format, opts.run, opts.maxRows);
        const { runSql } = await import('../../store/sql.ts');
        const { rows } = await runSql(opts.traces, q, { format: opts.format, out: opts.out, runs: opts.run, maxRows: opts.maxRows, csvSafe: opts.csvSafe });
        if (opts.out) process.stderr.write(`wrote ${rows} row${rows === 1 ? '' : 's'} to ${terminalLine(opts.out)}\n`);
      }),
    );
  formatOption(storeOptions(cmd)); // the shared options (src/cli/options.ts)
  withExamples(
    cmd,
    `standoff sql "SELECT subject_model, avg(gathered_evidence::int) AS gathered FROM episodes GROUP BY 1 ORDER BY 1"`,
    `standoff sql --format csv "SELECT * FROM scores WHERE scorer = 'policy_compliant_action'"`,
    `standoff sql --out episodes.arrow "SELECT * FROM episodes"`,
    `standoff sql --max-rows 100 "SELECT * FROM messages"`,
    `standoff sql        # REPL: .tables, .schema TABLE, .mode FORMAT, .quit`,
  );

  const tables = program
    .command('tables')
    .description('list the tables with row counts, and the runs in the store')
    .action(
      action(async (opts: { traces: string; format: Format }) => {
        const { readInventory } = await import('../../store/tables.ts');
        const inv = await readInventory(opts.traces);
        if (opts.format === 'json') return printResult({ tables: inv.tables.rows, runs: inv.runs.rows }, 'json');
        printTable(inv.tables, opts.format);
        printText('\n');
        printTable(inv.runs, opts.format);
      }),
    );
  formatOption(storeOptions(tables, { runs: false })); // the shared options (src/cli/options.ts)
  withExamples(tables, 'standoff tables', 'standoff tables --traces other-store --format json');
}

const parsePositiveInt = (name: string) => (value: string): number => {
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1) throw new InvalidArgumentError(`${name} must be a positive integer, got "${value}"`);
  return Number(value);
};

const HELP = `commands: .tables  .schema TABLE  .mode ${FORMATS.join('|')}  .help  .quit
statements end with ";" and may span lines`;

async function repl(traces: string, initialFormat: Format, runs?: string[], maxRows?: number): Promise<void> {
  const { openSandboxedStore, streamReadOnly, writeFormatted } = await import('../../store/sql.ts');
  const { readInventory } = await import('../../store/tables.ts');
  const { TABLE_NAMES, sqlColumns } = await import('../../schema/tables.ts');
  const store = await openSandboxedStore(traces, runs);
  let format = initialFormat;
  const historyFile = process.env.STANDOFF_HISTORY ?? join(homedir(), '.standoff_history');
  const history = existsSync(historyFile) ? readFileSync(historyFile, 'utf8').split('\n').filter(Boolean).reverse().slice(0, 500) : [];
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: process.stdin.isTTY, history, historySize: 500 });
  const interactive = process.stdin.isTTY;
  const prompt = (cont: boolean) => {
    if (interactive) {
      rl.setPrompt(cont ? '   ...> ' : 'standoff> ');
      rl.prompt();
    }
  };
  if (interactive) process.stdout.write(`standoff sql on ${traces} (${store.runIds.length} run${store.runIds.length === 1 ? '' : 's'}); ${HELP}\n`);
  let buffer = '';
  prompt(false);
  try {
    for await (const line of rl) {
      const trimmed = line.trim();
      if (buffer === '' && trimmed.startsWith('.')) {
        const [cmd, arg] = trimmed.split(/\s+/, 2);
        if (cmd === '.quit' || cmd === '.exit') break;
        else if (cmd === '.help') process.stdout.write(HELP + '\n');
        else if (cmd === '.tables') {
          const inv = await readInventory(traces);
          process.stdout.write(formatResult(inv.tables, format));
        } else if (cmd === '.schema') {
          if (!arg || !(TABLE_NAMES as string[]).includes(arg)) process.stderr.write(`standoff: .schema needs a table: ${TABLE_NAMES.join(', ')}\n`);
          else {
            const rows = sqlColumns(arg as TableName).map((c) => ({ column: c.name, type: c.type, nullable: c.nullable, description: c.description }));
            process.stdout.write(formatResult({ columns: ['column', 'type', 'nullable', 'description'], types: [], rows }, format));
          }
        } else if (cmd === '.mode') {
          if (arg && (FORMATS as readonly string[]).includes(arg)) format = arg as Format;
          else process.stderr.write(`standoff: .mode takes one of ${FORMATS.join(', ')}\n`);
        } else process.stderr.write(`standoff: unknown command ${terminalLine(cmd)}; ${HELP}\n`);
        prompt(false);
        continue;
      }
      buffer += (buffer ? '\n' : '') + line;
      if (!trimmed.endsWith(';')) {
        prompt(buffer.trim() !== '');
        if (buffer.trim() === '') buffer = '';
        continue;
      }
      const statement = buffer;
      buffer = '';
      if (interactive) appendFileSync(historyFile, statement.replace(/\n/g, ' ') + '\n');
      try {
        await writeFormatted(await streamReadOnly(store.conn, statement), format, process.stdout, { maxRows });
      } catch (err) {
        const code = reportError(err);
        if (!interactive) process.exitCode = code;
      }
      prompt(false);
    }
    if (buffer.trim() !== '') process.stderr.write(`standoff: unterminated statement ignored (end statements with ";"): ${terminalLine(oneLine(buffer).slice(0, 60))}\n`);
  } finally {
    rl.close();
    store.close();
  }
}
