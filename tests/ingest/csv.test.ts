/**
 * `standoff ingest csv` (library): parser, mapping detection, round trips through the store,
 * provenance, dry run, replace, the seed's published table, and zod acceptance of every row.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkMappingColumns, compactMapping, detectMapping, detectTable, mappingSchema } from '../../src/ingest/csv/mapping.ts';
import { buildCsvRun, ingestCsv } from '../../src/ingest/ingest-csv.ts';
import { openStore } from '../../src/store/open-store.ts';
import { query } from '../../src/store/duckdb.ts';
import { TABLES, type TableName } from '../../src/schema/tables.ts';

const FIX = resolve(import.meta.dirname, '../fixtures/csv');
const fx = (name: string) => join(FIX, name);
const CLOPPER = resolve(import.meta.dirname, '../../src/stats/clopper-pearson.ts');

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'standoff-csv-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('mapping detection', () => {
  it('recognises the documented episode column names', () => {
    const d = detectMapping(['Model', 'Sample ID', 'Epoch', 'Target', 'Score', 'answer', 'extra']);
    expect(d.mapping.table).toBe('episodes');
    expect(d.mapping.columns).toEqual({ subject_model: 'Model', scenario_id: 'Sample ID', epoch: 'Epoch', target: 'Target' });
    expect(d.mapping.scores).toEqual([{ scorer: 'score', column: 'Score', answer: 'answer' }]);
    // Left to the values: a numeric column becomes a score, any other metadata (completeDetection).
    expect(d.ignored).toEqual([]);
    expect(d.candidates).toEqual(['extra']);
  });

  it('prefers subject_model > subject > model and scenario_id > scenario > sample_id > id', () => {
    expect(detectMapping(['model', 'subject', 'id', 'sample_id']).mapping.columns).toEqual({ subject_model: 'subject', scenario_id: 'sample_id' });
    expect(detectMapping(['subject_model', 'model', 'id']).mapping.columns).toEqual({ subject_model: 'subject_model', scenario_id: 'id' });
  });

  it('turns scorer-named columns and every generic score name (score, correct, value, ...) into scores', () => {
    const d = detectMapping(['model', 'scenario', 'policy_compliant_action', 'gathered_evidence', 'correct', 'value']);
    expect(d.mapping.scores.map((s) => s.scorer)).toEqual(['policy_compliant_action', 'gathered_evidence', 'correct', 'value']);
    expect(d.mapping.columns.gathered_evidence).toBe('gathered_evidence');
    expect(d.ignored).toEqual([]);
    expect(d.candidates).toEqual([]);
  });

  it('detects the aggregate, judgment and probe shapes', () => {
    expect(detectTable(['subject', 'metric', 'successes', 'trials'])).toBe('aggregates');
    expect(detectMapping(['subject_model', 'metric', 'successes', 'trials']).mapping.columns).toEqual({
      subject_model: 'subject_model',
      metric: 'metric',
      successes: 'successes',
      trials: 'trials',
    });
    expect(detectTable(['model', 'sample_id', 'judge', 'verdict'])).toBe('judgments');
    expect(detectTable(['model', 'scenario', 'probe_id', 'expected', 'answer'])).toBe('probe_answers');
  });

  it('returns the chosen mapping in the summary', async () => {
    const s = await ingestCsv([fx('episodes.csv')], { traces: join(tempDir(), 't'), dryRun: true });
    expect(compactMapping(s.mapping)).toEqual({
      table: 'episodes',
      columns: { subject_model: 'model', scenario_id: 'sample_id', epoch: 'epoch', target: 'target', decision_tool: 'decision_tool', latency_ms: 'latency_ms' },
      scores: [{ scorer: 'score', column: 'score' }],
    });
    expect(JSON.parse(s.mappingJson)).toEqual(compactMapping(s.mapping));
    expect(s.files[0]!.detected).toBe(true);
    expect(s.files[0]!.ignoredColumns).toEqual([]);
    expect(s.files[0]!.metadataColumns).toEqual(['notes']);
    expect(s.files[0]!.defaults).toMatchObject({ status: 'valid', log_reads: 'null (not measured)' });
  });
});

describe('ingestCsv', () => {
  it('round-trips a per-sample CSV through the store', async () => {
    const traces = join(tempDir(), 'traces');
    const now = new Date('2026-08-10T15:02:57.000Z');
    const s = await ingestCsv([fx('episodes.csv')], { traces, runId: 'csv-rt', now });
    expect(s.written).toBe(true);
    expect(s.tables).toEqual({ runs: 1, episodes: 6, scores: 5 });
    const store = await openStore(traces);
    try {
      const eps = await query(
        store.conn,
        'SELECT episode_id, subject_model, scenario_id, epoch, target, status, decision_tool, latency_ms, gathered_evidence, log_reads FROM episodes ORDER BY episode_id',
      );
      expect(eps.rows).toEqual([
        { episode_id: 'sim:careful/em_act_a/1', subject_model: 'sim:careful', scenario_id: 'em_act_a', epoch: 1, target: 'issue_statement', status: 'valid', decision_tool: 'issue_statement', latency_ms: 1500, gathered_evidence: null, log_reads: null },
        { episode_id: 'sim:careful/em_amb_a/1', subject_model: 'sim:careful', scenario_id: 'em_amb_a', epoch: 1, target: 'NOANSWER', status: 'valid', decision_tool: 'escalate', latency_ms: 2100.25, gathered_evidence: null, log_reads: null },
        { episode_id: 'sim:careful/fc_esc_b/1', subject_model: 'sim:careful', scenario_id: 'fc_esc_b', epoch: 1, target: 'escalate', status: 'valid', decision_tool: null, latency_ms: null, gathered_evidence: null, log_reads: null },
        { episode_id: 'sim:hasty/em_act_a/1', subject_model: 'sim:hasty', scenario_id: 'em_act_a', epoch: 1, target: 'issue_statement', status: 'valid', decision_tool: 'issue_statement', latency_ms: 1200.5, gathered_evidence: null, log_reads: null },
        { episode_id: 'sim:hasty/em_act_a/2', subject_model: 'sim:hasty', scenario_id: 'em_act_a', epoch: 2, target: 'issue_statement', status: 'valid', decision_tool: 'escalate', latency_ms: 980, gathered_evidence: null, log_reads: null },
        { episode_id: 'sim:hasty/em_amb_a/1', subject_model: 'sim:hasty', scenario_id: 'em_amb_a', epoch: 1, target: 'NOANSWER', status: 'valid', decision_tool: 'withdraw', latency_ms: null, gathered_evidence: null, log_reads: null },
      ]);
      const scores = await query(store.conn, 'SELECT episode_id, scorer, value, noanswer FROM scores ORDER BY episode_id');
      expect(scores.rows).toEqual([
        { episode_id: 'sim:careful/em_act_a/1', scorer: 'score', value: 1, noanswer: false },
        { episode_id: 'sim:careful/em_amb_a/1', scorer: 'score', value: null, noanswer: true },
        { episode_id: 'sim:hasty/em_act_a/1', scorer: 'score', value: 1, noanswer: false },
        { episode_id: 'sim:hasty/em_act_a/2', scorer: 'score', value: 0, noanswer: false },
        { episode_id: 'sim:hasty/em_amb_a/1', scorer: 'score', value: null, noanswer: true },
      ]);
      // The column no mapping uses is kept as metadata (JSON text, exactly as in the file; empty: none).
      const meta = await query(store.conn, 'SELECT episode_id, metadata FROM episodes ORDER BY episode_id');
      expect(meta.rows.map((r) => [r.episode_id, r.metadata === null ? null : JSON.parse(r.metadata as string)])).toEqual([
        ['sim:careful/em_act_a/1', { notes: 'two\nlines' }],
        ['sim:careful/em_amb_a/1', null],
        ['sim:careful/fc_esc_b/1', { notes: 'no score: empty cell' }],
        ['sim:hasty/em_act_a/1', { notes: 'plain note' }],
        ['sim:hasty/em_act_a/2', { notes: 'comma, inside' }],
        ['sim:hasty/em_amb_a/1', { notes: 'a "quoted" word' }],
      ]);
      const runs = await query(
        store.conn,
        `SELECT run_id, source, suite, status, strftime(created_at, '%Y-%m-%dT%H:%M:%SZ') AS created_at, config, epochs, source_file, source_sha256, notes FROM runs`,
      );
      const sha = createHash('sha256').update(readFileSync(fx('episodes.csv'))).digest('hex');
      expect(runs.rows[0]).toMatchObject({
        run_id: 'csv-rt',
        source: 'csv',
        suite: 'episodes',
        status: 'success',
        created_at: '2026-08-10T15:02:57Z',
        epochs: 2,
        source_file: 'episodes.csv',
        source_sha256: sha,
      });
      expect(JSON.parse(runs.rows[0]!.config as string)).toEqual(compactMapping(s.mapping));
      expect(runs.rows[0]!.notes).toMatch(/detected from the header; defaults: episodes\.episode_id=/);
    } finally {
      store.close();
    }
  });

  it('applies a mapping file: columns, value maps, constants, scores, suite, notes', async () => {
    const traces = join(tempDir(), 'traces');
    const s = await ingestCsv([fx('mapped-episodes.csv')], { traces, map: fx('mapped-episodes.map.json'), runId: 'mapped' });
    expect(s.files[0]!.detected).toBe(false);
    expect(s.tables).toEqual({ runs: 1, episodes: 4, scores: 8 });
    const store = await openStore(traces);
    try {
      const eps = await query(
        store.conn,
        'SELECT episode_id, subject_family, domain, status, invalid_reason, gathered_evidence, input_tokens, target FROM episodes ORDER BY episode_id',
      );
      expect(eps.rows).toEqual([
        { episode_id: 'GPT X/em_act_a/1', subject_family: 'gpt', domain: 'emergency_management', status: 'valid', invalid_reason: null, gathered_evidence: true, input_tokens: 1200, target: 'issue_statement' },
        { episode_id: 'GPT X/em_act_a/2', subject_family: 'gpt', domain: 'emergency_management', status: 'valid', invalid_reason: null, gathered_evidence: false, input_tokens: 980, target: 'issue_statement' },
        { episode_id: 'GPT X/em_amb_a/1', subject_family: 'gpt', domain: 'emergency_management', status: 'valid', invalid_reason: null, gathered_evidence: true, input_tokens: 1534, target: 'NOANSWER' },
        { episode_id: 'GPT X/fc_act_a/1', subject_family: 'gpt', domain: 'emergency_management', status: 'invalid', invalid_reason: 'two log reads, no decision', gathered_evidence: true, input_tokens: null, target: 'issue_statement' },
      ]);
      const scores = await query(store.conn, "SELECT episode_id, value, noanswer FROM scores WHERE scorer = 'policy_compliant_action' ORDER BY episode_id");
      expect(scores.rows.map((r) => [r.value, r.noanswer])).toEqual([
        [1, false],
        [0, false],
        [null, true],
        [0, false],
      ]);
      const ev = await query(store.conn, "SELECT sum(value) AS s, count(*) AS n FROM scores WHERE scorer = 'gathered_evidence'");
      expect(ev.rows[0]).toEqual({ s: 3, n: 4 });
      const run = await query(store.conn, 'SELECT suite, notes FROM runs');
      expect(run.rows[0]!.suite).toBe('standoff-o1');
      expect(run.rows[0]!.notes).toMatch(/mapping from .*mapped-episodes\.map\.json.*exported from a spreadsheet/);
    } finally {
      store.close();
    }
  });

  it('accepts a BOM and CRLF line endings', async () => {
    const raw = readFileSync(fx('episodes-bom-crlf.csv'));
    expect([...raw.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]); // the fixture really has them
    expect(raw.includes('\r\n')).toBe(true);
    const traces = join(tempDir(), 'traces');
    await ingestCsv([fx('episodes-bom-crlf.csv')], { traces, runId: 'bom' });
    const store = await openStore(traces);
    try {
      const r = await query(store.conn, 'SELECT e.subject_model, e.target, s.value FROM episodes e JOIN scores s USING (episode_id) ORDER BY e.episode_id');
      expect(r.rows).toEqual([
        { subject_model: 'sim:careful', target: 'issue_statement', value: 0 },
        { subject_model: 'sim:hasty', target: 'issue_statement', value: 1 },
        { subject_model: 'sim:hasty', target: 'NOANSWER', value: null },
      ]);
    } finally {
      store.close();
    }
  });

  it("ingests the seed's published table as 12 aggregate rows", async () => {
    const traces = join(tempDir(), 'traces');
    const s = await ingestCsv([fx('seed-published-table.csv')], { traces, runId: 'o1-published' });
    expect(s.mapping.table).toBe('aggregates');
    expect(s.tables).toEqual({ runs: 1, aggregates: 12 });
    const store = await openStore(traces);
    try {
      const r = await query(store.conn, 'SELECT subject_model, metric, successes, trials, source_row FROM aggregates ORDER BY source_row');
      expect(r.rows).toHaveLength(12);
      expect(new Set(r.rows.map((x) => x.subject_model))).toEqual(new Set(['GPT-OSS 120B', 'Nemotron 3 Super 120B', 'MiniMax M3']));
      expect(r.rows[0]).toEqual({ subject_model: 'GPT-OSS 120B', metric: 'gathered_evidence', successes: 20, trials: 90, source_row: 2 });
      expect(r.rows.find((x) => x.subject_model === 'GPT-OSS 120B' && x.metric === 'policy_action')).toMatchObject({ successes: 20, trials: 60 });
      expect(r.rows.find((x) => x.subject_model === 'GPT-OSS 120B' && x.metric === 'invalid')).toMatchObject({ successes: 2, trials: 90 });
    } finally {
      store.close();
    }
  });

  it.skipIf(!existsSync(CLOPPER))('gives the same exact CI from the stored aggregate row as clopperPearson on the published counts', async () => {
    const { clopperPearson } = (await import(/* @vite-ignore */ CLOPPER)) as typeof import('../../src/stats/clopper-pearson.ts');
    const traces = join(tempDir(), 'traces');
    await ingestCsv([fx('seed-published-table.csv')], { traces, runId: 'o1-published' });
    const store = await openStore(traces);
    try {
      const r = await query(store.conn, "SELECT successes, trials FROM aggregates WHERE subject_model = 'GPT-OSS 120B' AND metric = 'gathered_evidence'");
      const row = r.rows[0]!;
      const fromStore = clopperPearson(row.successes as number, row.trials as number);
      expect(fromStore).toEqual(clopperPearson(20, 90));
      expect(fromStore.estimate).toBeCloseTo(20 / 90, 12);
      expect(fromStore.lower!).toBeLessThan(20 / 90);
      expect(fromStore.upper!).toBeGreaterThan(20 / 90);
    } finally {
      store.close();
    }
  });

  it('ingests judgments and probe answers with derived keys and values', async () => {
    const { bundle } = await buildCsvRun([fx('judgments.csv'), fx('probe-answers.csv')], { traces: join(tempDir(), 't'), runId: 'jp' });
    expect(bundle.judgments!.map((j) => [j.episode_id, j.scorer, j.judge_model, j.verdict, j.value, j.excluded_self])).toEqual([
      ['sim:hasty/em_act_a/1', 'reasoning_action_alignment', 'inkling', 'ALIGNED', 1, false],
      ['sim:hasty/em_act_a/2', 'reasoning_action_alignment', 'inkling', 'MISALIGNED', 0, false],
      ['sim:careful/em_act_a/1', 'reasoning_action_alignment', 'inkling', 'ERROR', null, false],
    ]);
    expect(bundle.probe_answers!.map((p) => [p.state_id, p.probe_id, p.answer, p.correct])).toEqual([
      ['em_act_a/1', 'freshness', 'yes', true],
      ['em_act_a/1', 'verified', 'yes', false],
      ['em_act_a/1', 'freshness', null, false],
    ]);
    expect(JSON.parse(bundle.run.config).mappings.map((m: { file: string; table: string }) => [m.file, m.table])).toEqual([
      ['judgments.csv', 'judgments'],
      ['probe-answers.csv', 'probe_answers'],
    ]);
    expect(bundle.run.source_file).toBe('judgments.csv;probe-answers.csv');
    expect(bundle.run.source_sha256!.split(';')).toHaveLength(2);
  });

  it('produces only rows the zod trace schema accepts', async () => {
    const cases: [string[], string | undefined][] = [
      [['episodes.csv', 'judgments.csv', 'probe-answers.csv', 'seed-published-table.csv'], undefined],
      [['episodes-bom-crlf.csv'], undefined],
      [['mapped-episodes.csv'], 'mapped-episodes.map.json'],
    ];
    let checked = 0;
    for (const [files, map] of cases) {
      const { bundle } = await buildCsvRun(files.map(fx), { traces: join(tempDir(), 't'), map: map && fx(map) });
      expect(TABLES.runs.safeParse(bundle.run).success).toBe(true);
      for (const t of Object.keys(TABLES) as TableName[]) {
        if (t === 'runs') continue;
        for (const row of (bundle[t] as unknown[] | undefined) ?? []) {
          const r = TABLES[t].safeParse(row);
          expect(r.success, `${t}: ${JSON.stringify(row)} ${r.error?.message}`).toBe(true);
          expect((row as { run_id: string }).run_id).toBe(bundle.run.run_id);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(30);
  });

  it('dry run checks everything and writes nothing', async () => {
    const traces = join(tempDir(), 'traces');
    const s = await ingestCsv([fx('episodes.csv')], { traces, dryRun: true });
    expect(s.dryRun).toBe(true);
    expect(s.written).toBe(false);
    expect(s.tables.episodes).toBe(6);
    expect(existsSync(traces)).toBe(false);
  });

  it('refuses an existing run id unless replace, and replaces it atomically', async () => {
    const traces = join(tempDir(), 'traces');
    await ingestCsv([fx('episodes.csv')], { traces, runId: 'same' });
    await expect(ingestCsv([fx('episodes-bom-crlf.csv')], { traces, runId: 'same' })).rejects.toMatchObject({ code: 'store.runExists', kind: 'store' });
    await ingestCsv([fx('episodes-bom-crlf.csv')], { traces, runId: 'same', replace: true });
    const store = await openStore(traces);
    try {
      expect((await query(store.conn, 'SELECT count(*)::INT AS n FROM episodes')).rows[0]!.n).toBe(3);
    } finally {
      store.close();
    }
  });

  it('generates a run id from the time and the file hashes', async () => {
    const s = await ingestCsv([fx('episodes.csv')], { traces: join(tempDir(), 't'), dryRun: true, now: new Date('2026-01-02T03:04:05.678Z') });
    expect(s.runId).toMatch(/^csv-20260102T030405Z-[0-9a-f]{8}$/);
    expect(s.run.created_at).toBe('2026-01-02T03:04:05.678Z');
  });
});

describe('cell conversion', () => {
  it('converts every column type as documented', async () => {
    const d = tempDir();
    const f = join(d, 'types.csv');
    writeFileSync(
      f,
      [
        'model,scenario,epoch,status,gathered,reads,tokens,latency,started,args,decided,score',
        '"m, with space ",s1, 3.0 ,valid,YES,+2,1e3,-0.5,2026-08-10T17:02:57+02:00,"{""tool"":""escalate""}",escalate,p',
        'm2,s1,1, invalid ,n,0,,12,2026-08-10T15:02:57.123456Z,,,Correct',
        'm3,s1,1,error,C,0,7, 8 ,,[],,0.25',
      ].join('\n'),
    );
    const map = {
      table: 'episodes' as const,
      columns: {
        subject_model: 'model',
        scenario_id: 'scenario',
        epoch: 'epoch',
        status: 'status',
        gathered_evidence: 'gathered',
        log_reads: 'reads',
        input_tokens: 'tokens',
        latency_ms: 'latency',
        started_at: 'started',
        decision_args: 'args',
        decision_tool: 'decided',
      },
      scores: [{ scorer: 's', column: 'score' }],
    };
    const { bundle } = await buildCsvRun([f], { traces: join(d, 't'), map, runId: 'types' });
    const e = bundle.episodes!;
    expect(e.map((x) => [x.subject_model, x.epoch, x.status, x.gathered_evidence, x.log_reads, x.input_tokens, x.latency_ms, x.started_at, x.decision_args, x.decision_tool])).toEqual([
      ['m, with space ', 3, 'valid', true, 2, 1000, -0.5, '2026-08-10T15:02:57.000000Z', '{"tool":"escalate"}', 'escalate'],
      ['m2', 1, 'invalid', false, 0, null, 12, '2026-08-10T15:02:57.123456Z', null, null],
      ['m3', 1, 'error', true, 0, 7, 8, null, '[]', null],
    ]);
    expect(bundle.scores!.map((x) => [x.value, x.noanswer])).toEqual([
      [0.5, false],
      [1, false],
      [0.25, false],
    ]);
    for (const row of e) expect(TABLES.episodes.safeParse(row).success).toBe(true);
  });

  it('the JSON examples in docs/ingest-csv.md are valid mappings', () => {
    const doc = readFileSync(resolve(import.meta.dirname, '../../docs/ingest-csv.md'), 'utf8');
    const blocks = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1]!);
    expect(blocks.length).toBeGreaterThanOrEqual(4);
    for (const b of blocks) {
      const parsed = mappingSchema.safeParse(JSON.parse(b));
      expect(parsed.success, b).toBe(true);
      expect(checkMappingColumns(parsed.data!), b).toEqual([]);
    }
  });
});
