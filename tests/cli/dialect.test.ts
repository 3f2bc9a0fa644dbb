/**
 * One dialect across the CLI. The test walks the command tree (every command the program defines,
 * so commands added later are covered without editing this file) and checks each command's real
 * `--help` (the spawned bin) and its commander definition for the shared options of
 * src/cli/options.ts: `--traces` wherever a store is read or written, `--format
 * table|csv|json|markdown` (with the hidden `--json` alias) wherever results are printed, `--level`
 * only as the confidence level, and "did you mean" for a misspelled option. A command that
 * legitimately lacks one of them is listed below with the reason.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommanderError, type Command } from 'commander';
import { buildProgram } from '../../src/cli/main.ts';
import { closestName, didYouMean, editDistance } from '../../src/did-you-mean.ts';
import { runCli } from '../helpers/cli.ts';

/** Commands that print no result (they write files, serve, or print a document), and why. */
const NO_FORMAT: Record<string, string> = {
  'report build': 'writes REPORT.md, figures/ and results.json',
  'notebook run': 'writes the rendered notebook and its figures',
  schema: 'prints the schema document (docs/schema.md)',
  'verifier serve': 'a server',
  'sim serve': 'a server',
};
/** Commands that touch no trace store, and why. */
const NO_STORE: Record<string, string> = {
  schema: 'the schema, not a store',
  generate: 'writes scenario files',
  manifest: 'hashes a state directory, not a store',
  'verifier serve': 'a server over scenario logs',
  'sim serve': 'a simulated endpoint',
  'notebook list': 'lists the shipped notebook files',
  merge: 'OUT and the source stores are its arguments (standoff merge OUT STORE...)',
};

interface Cmd {
  path: string;
  cmd: Command;
}

/** Every command that runs something: leaves, and parents with options of their own (ci --list-metrics). */
function commands(c: Command, prefix: string[] = []): Cmd[] {
  const out: Cmd[] = [];
  for (const sub of c.commands) {
    const path = [...prefix, sub.name()];
    const ownOptions = sub.options.filter((o) => o.long !== '--help');
    if (sub.commands.length === 0 || ownOptions.length > 0) out.push({ path: path.join(' '), cmd: sub });
    out.push(...commands(sub, path));
  }
  return out;
}

const long = (c: Command, flag: string) => c.options.find((o) => o.long === flag);

/** Parses argv in-process with the real definitions; returns commander's error message (no action runs for these). */
async function parseError(argv: string[]): Promise<string> {
  const program = buildProgram({ writeOut: () => undefined, writeErr: () => undefined });
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err.message;
    throw err;
  }
  return '';
}

const ALL = commands(buildProgram());

describe('the command tree', () => {
  it('has the commands the README documents', () => {
    const paths = ALL.map((c) => c.path);
    for (const p of ['sql', 'tables', 'ci', 'ci exact', 'ci bootstrap', 'ci paired', 'agreement', 'judges', 'probes', 'run', 'validate', 'ingest csv', 'ingest inspect', 'report build', 'notebook run', 'generate', 'schema']) {
      expect(paths).toContain(p);
    }
    for (const name of [...Object.keys(NO_FORMAT), ...Object.keys(NO_STORE)]) expect(paths, `exemption for a command that does not exist: ${name}`).toContain(name);
  });
});

describe.each(ALL.map((c) => [c.path, c] as const))('standoff %s', (path, { cmd }) => {
  it('--help lists the shared options', () => {
    const r = runCli([...path.split(' '), '--help']);
    expect(r.code, r.stderr).toBe(0);
    const help = r.stdout.replace(/\s+/g, ' '); // commander wraps help at 80 columns
    if (!NO_STORE[path]) {
      expect(help, 'reads or writes a store: --traces').toContain(' --traces <dir> trace store directory (default: "traces") ');
    }
    if (!NO_FORMAT[path]) {
      expect(help, 'prints results: --format').toMatch(/-f, --format <format>\s+output format \(choices: "table", "csv", "json", "markdown", default: "table"\)/);
      expect(help, '--json is a hidden alias').not.toMatch(/--json/);
      expect(long(cmd, '--json')?.hidden).toBe(true);
    }
    if (long(cmd, '--level')) expect(help).toMatch(/--level <p>\s+confidence level/);
    if (long(cmd, '--measure')) expect(help).toMatch(/--measure <level>\s+measurement level of the ratings \(choices: "nominal", "ordinal", "interval", "ratio"/);
  });

  it('a misspelled option gets "did you mean"', async () => {
    const option = cmd.options.find((o) => o.long && o.long.length >= 7 && !o.hidden && o.long !== '--help')!;
    if (!option) return; // a command without a long enough option has nothing to misspell
    const typo = option.long!.slice(0, -2) + option.long!.slice(-1); // drop the second-to-last letter
    // Mandatory options are checked before unknown ones: give them a value.
    const mandatory = cmd.options.filter((o) => o.mandatory).flatMap((o) => [o.long!, o.argChoices?.[0] ?? '1']);
    const message = await parseError([...path.split(' '), ...mandatory, typo]);
    expect(message).toContain(`unknown option '${typo}'`);
    expect(message).toContain(`(Did you mean ${option.long}?)`);
  });

  it('--level is the confidence level: a measurement level is refused with a pointer to --measure', async () => {
    if (!long(cmd, '--level')) return;
    const message = await parseError([...path.split(' '), '--level', 'ordinal']);
    expect(message).toContain('--level is the confidence level (e.g. 0.95); for the measurement level use --measure ordinal');
  });
});

describe('usage errors', () => {
  it('one line on stderr, exit 2, with the suggestion', () => {
    const r = runCli(['ci', 'exact', '--succeses', '3', '--trials', '9']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("standoff: usage: unknown option '--succeses' (did you mean --successes?)\n");
    const c = runCli(['agreemnt']);
    expect(c.stderr).toBe("standoff: usage: unknown command 'agreemnt' (did you mean agreement?)\n");
    const none = runCli(['ci', 'exact', '--zzzzzz']);
    expect(none.stderr).toBe("standoff: usage: unknown option '--zzzzzz' (see --help)\n");
  });

  it('--json is --format json, and conflicts with another --format', () => {
    const a = runCli(['ci', 'exact', '--successes', '3', '--trials', '9', '--json']);
    const b = runCli(['ci', 'exact', '--successes', '3', '--trials', '9', '--format', 'json']);
    expect(a.code, a.stderr).toBe(0);
    expect(a.stdout).toBe(b.stdout);
    expect(JSON.parse(a.stdout).upper).toBeGreaterThan(0);
    const c = runCli(['ci', 'exact', '--successes', '3', '--trials', '9', '--json', '--format', 'csv']);
    expect([c.code, c.stderr]).toEqual([2, 'standoff: usage: --json is --format json; it cannot go with --format csv (see --help)\n']);
  });

  it('every format on a store command: validate and ci --list-metrics --traces', () => {
    const v = runCli(['validate', '--traces', 'traces', '--json']);
    expect(v.code, v.stderr).toBe(0);
    expect(JSON.parse(v.stdout).ok).toBe(true);
    const md = runCli(['validate', '--traces', 'traces', '--format', 'markdown']);
    expect(md.stdout.split('\n')[0]).toBe('| run_id | name | ok | detail |');
    const m = runCli(['ci', '--list-metrics', '--traces', 'traces', '--format', 'csv']);
    expect(m.code, m.stderr).toBe(0);
    expect(m.stdout.split('\n')[0]).toBe('metric,source,kind,observations,not_measured,description');
    const missing = runCli(['ci', '--list-metrics', '--traces', 'no-such-store']);
    expect([missing.code, missing.stderr]).toEqual([4, 'standoff: trace store no-such-store does not exist (pass --traces DIR, or create runs with standoff run / standoff ingest)\n']);
  });
});

describe('config files: unknown fields get "did you mean"', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'standoff-dialect-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    [{ subjects: [{ model: 'sim:hasty' }], concurency: 4 }, 'field "concurency" is not a known field (did you mean "concurrency"?)'],
    [{ subjects: [{ model: 'sim:hasty', temprature: 1 }] }, 'field "subjects[0].temprature" is not a known field (did you mean "temperature"?)'],
    [{ subjects: [{ model: 'sim:hasty' }], timeouts: { request_sm: 5 } }, 'field "timeouts.request_sm" is not a known field (did you mean "request_ms"?)'],
    [{ subjects: [{ model: 'sim:hasty' }], colour: 'red' }, 'field "colour" is not a known field\n'],
  ])('%j', (config, message) => {
    const file = join(dir, 'standoff.config.json');
    writeFileSync(file, JSON.stringify(config));
    const r = runCli(['run', '--config', file, '--traces', join(dir, 'traces')], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`standoff: ${file}: ${message}${message.endsWith('\n') ? '' : '\n'}`);
  });
});

describe('did-you-mean distance', () => {
  it('edit distance with adjacent transpositions (values from NLTK edit_distance(transpositions=True))', () => {
    // /usr/bin/python3 -c "from nltk.metrics.distance import edit_distance as e; print(e('kitten','sitting',transpositions=True))"
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('acb', 'abc')).toBe(1);
    expect(editDistance('concurency', 'concurrency')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('abc', '')).toBe(3);
    // Optimal string alignment edits no substring twice: CA -> ABC is 3 (unrestricted Damerau, NLTK: 2).
    expect(editDistance('ca', 'abc')).toBe(3);
  });

  it('suggests only close names', () => {
    expect(closestName('epoch', ['seed', 'epochs'])).toBe('epochs');
    expect(closestName('xyz', ['seed', 'epochs'])).toBeUndefined();
    expect(didYouMean('judgs', ['judges', 'subjects'])).toBe(' (did you mean "judges"?)');
  });
});
