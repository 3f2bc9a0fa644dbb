import { describe, it, expect, beforeEach } from 'vitest';
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, basename } from 'node:path';
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { zipSync } from 'fflate';
import { ingestInspect } from '../../src/ingest/ingest-inspect.ts';
import { loadInspectLog, defaultRunId, type LoadedInspectLog } from '../../src/ingest/inspect/index.ts';
import { parseJsonTolerant } from '../../src/ingest/inspect/read-eval.ts';
import { ZipReader } from '../../src/ingest/inspect/zip.ts';
import { decisionFacts, mapScoreValue, stripSecrets } from '../../src/ingest/inspect/map.ts';
import { openStore } from '../../src/store/open-store.ts';
import { query } from '../../src/store/duckdb.ts';
import { TABLES, sqlColumns, type TableName } from '../../src/schema/tables.ts';
import { StandoffError } from '../../src/errors.ts';
import { hashTree } from '../helpers/fixtures.ts';
import {
  FIXTURES,
  REAL_LOGS,
  EXPLANATION_TEXT,
  LOG_TEXT,
  SUBJECT,
  buildZip,
  chunkedSampleMembers,
  jsonLogText,
  memberText,
  readMembers,
  shapedEvalMembers,
  shapedHeader,
  shapedSamples,
  writeZip,
  type ZipMember,
} from '../fixtures/inspect/make-logs.ts';

let dir: string;
let store: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-inspect-'));
  store = join(dir, 'traces');
});

async function load(path: string, runId?: string): Promise<LoadedInspectLog> {
  const r = await loadInspectLog(path, { runId });
  expect(r.problems.map((p) => p.message)).toEqual([]);
  return r.log!;
}

/** Independent count of what a real log holds, read with fflate (not the reader under test). */
function expectedFromZip(path: string) {
  const members = readMembers(path);
  const names = members.map(([n]) => n);
  const headerName = names.includes('header.json') ? 'header.json' : '_journal/start.json';
  const header = JSON.parse(memberText(members, headerName));
  const samples = members.filter(([n]) => /^samples\/[^/]+\.json$/.test(n)).map(([n]) => ({ name: n, s: JSON.parse(memberText(members, n)) }));
  return { header, samples };
}

describe('real Inspect logs', () => {
  for (const path of REAL_LOGS) {
    it(`ingests ${basename(path)}: samples x epochs, scores, messages`, async () => {
      const log = await load(path);
      const { header, samples } = expectedFromZip(path);
      const b = log.bundle;
      // one episode per sample x epoch member, matching the header's completed count
      expect(b.episodes.length).toBe(samples.length);
      expect(b.episodes.length).toBe(header.results.completed_samples);
      expect(log.expectedSamples).toBe(header.results.completed_samples);
      expect(new Set(b.episodes.map((e) => e.episode_id)).size).toBe(b.episodes.length);
      for (const { s } of samples) {
        const ep = b.episodes.find((e) => e.episode_id === `${s.id}/${s.epoch}`)!;
        expect(ep, `${s.id}/${s.epoch}`).toBeDefined();
        expect(ep.subject_model).toBe(header.eval.model);
        expect(ep.scenario_id).toBe(String(s.id));
        expect(ep.epoch).toBe(s.epoch);
        expect(ep.target).toBe(s.target);
        expect(ep.turns).toBe(s.messages.filter((m: { role: string }) => m.role === 'assistant').length);
        expect(ep.input_tokens).toBe(s.model_usage[header.eval.model].input_tokens);
        // every message is a row (these logs have no tool calls)
        const msgs = b.messages.filter((m) => m.episode_id === ep.episode_id);
        expect(msgs.map((m) => m.role)).toEqual(s.messages.map((m: { role: string }) => m.role));
        // every score maps
        const scores = b.scores.filter((x) => x.episode_id === ep.episode_id);
        expect(scores.map((x) => x.scorer).sort()).toEqual(Object.keys(s.scores).sort());
        for (const sc of scores) {
          const raw = s.scores[sc.scorer];
          expect(sc.value).toBe({ C: 1, I: 0 }[raw.value as string] ?? raw.value);
          expect(sc.answer).toBe(raw.answer ?? null);
          expect(sc.explanation).toBe(raw.explanation ?? null);
        }
      }
      const run = b.run;
      expect(run.source).toBe('inspect');
      expect(run.suite).toBe(header.eval.task);
      expect(run.created_at).toBe(new Date(header.eval.created).toISOString());
      expect(run.status).toBe('success');
      expect(run.epochs).toBe(header.eval.config.epochs ?? 1);
      expect(run.source_file).toBe(basename(path));
      expect(run.source_sha256).toBe(createHash('sha256').update(readFileSync(path)).digest('hex'));
      expect(run.run_id).toBe(defaultRunId(header, run.source_sha256!));
      // header metrics agree with the mapped scores
      for (const sc of header.results.scores ?? []) {
        if (sc.metrics?.accuracy) expect(log.scorerMeans[sc.name]!.mean).toBeCloseTo(sc.metrics.accuracy.value, 10);
      }
      // every row passes its table schema
      for (const [t, rows] of [['runs', [run]], ['episodes', b.episodes], ['messages', b.messages], ['scores', b.scores]] as const) {
        for (const r of rows) expect(() => (TABLES[t] as z.ZodObject).parse(r)).not.toThrow();
      }
    });
  }

  it('keeps two epochs apart and the model-graded explanation', async () => {
    const stream = await load(join(FIXTURES, 'log_streaming.eval'));
    expect(stream.bundle.episodes.map((e) => e.episode_id)).toEqual(['1/1', '1/2', '2/1', '2/2']);
    expect(stream.bundle.run.epochs).toBe(2);
    const graded = await load(join(FIXTURES, 'input-task-graded-fact.eval'));
    expect(graded.bundle.scores).toHaveLength(1);
    expect(graded.bundle.scores[0]).toMatchObject({ scorer: 'model_graded_fact', value: 1, noanswer: false });
    expect(graded.bundle.scores[0]!.explanation).toMatch(/GRADE: C$/);
  });

  it('rebuilds a crashed log (no header.json) from _journal/start.json and the sample members', async () => {
    const src = join(FIXTURES, 'popularity-journal-only.eval');
    const members = readMembers(src).filter(([n]) => !['header.json', 'summaries.json', 'reductions.json'].includes(n));
    const crashed = join(dir, 'popularity-crashed.eval');
    writeFileSync(crashed, zipSync(Object.fromEntries(members)));
    const start = JSON.parse(memberText(members, '_journal/start.json'));
    const log = await load(crashed);
    expect(log.rebuiltFromJournal).toBe(true);
    expect(log.expectedSamples).toBeNull();
    const b = log.bundle;
    expect(b.episodes).toHaveLength(members.filter(([n]) => n.startsWith('samples/')).length);
    expect(b.episodes).toHaveLength(10);
    expect(b.episodes.map((e) => e.scenario_id)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', '10']);
    expect(b.run.status).toBe('partial');
    expect(b.run.suite).toBe(start.eval.task);
    expect(b.run.created_at).toBe(new Date(start.eval.created).toISOString());
    expect(b.run.epochs).toBe(1);
    expect(b.run.notes).toMatch(/rebuilt from _journal\/start\.json/);
    expect(JSON.parse(b.run.config).plan.steps[0].solver).toBe('system_message');
    expect(b.messages).toHaveLength(30);
    // same rows as the complete log, apart from the run row
    const full = await load(src, b.run.run_id);
    expect(b.episodes).toEqual(full.bundle.episodes);
    expect(b.messages).toEqual(full.bundle.messages);
  });
});

describe('round trip through the store', () => {
  it('ingests every real log (one run per file) and reads back the same values with openStore', async () => {
    const expected = await Promise.all(REAL_LOGS.map((p) => load(p)));
    const summary = await ingestInspect(REAL_LOGS, { traces: store });
    expect(summary.runs.map((r) => r.written)).toEqual(REAL_LOGS.map(() => true));
    expect(summary.runs.map((r) => r.runId)).toEqual(expected.map((l) => l.bundle.run.run_id));
    const s = await openStore(store);
    try {
      expect(s.runIds).toEqual(expected.map((l) => l.bundle.run.run_id).sort());
      for (const table of ['runs', 'episodes', 'messages', 'scores'] as TableName[]) {
        const written = expected.flatMap((l) => (table === 'runs' ? [l.bundle.run] : (l.bundle[table as 'episodes'] as object[])));
        // a column the ingest does not fill (the runner-only columns added later) is written as NULL
        for (const r of written as Record<string, unknown>[]) for (const c of sqlColumns(table)) if (c.nullable && !(c.name in r)) r[c.name] = null;
        const cols = sqlColumns(table).map((c) => `"${c.name}"`).join(', ');
        const { rows } = await query(s.conn, `SELECT ${cols} FROM ${table}`);
        const norm = (r: object) => JSON.stringify(Object.fromEntries(Object.entries(r).sort()));
        expect(rows.map(norm).sort(), table).toEqual(written.map(norm).sort());
      }
      const { rows } = await query(s.conn, `SELECT run_id, count(*)::INT AS n FROM episodes GROUP BY 1 ORDER BY 1`);
      expect(rows.map((r) => r.n)).toEqual(expected.map((l) => ({ id: l.bundle.run.run_id, n: l.bundle.episodes.length })).sort((a, b) => (a.id < b.id ? -1 : 1)).map((x) => x.n));
    } finally {
      s.close();
    }
  });

  it('dry run validates and counts but writes nothing', async () => {
    const summary = await ingestInspect([join(FIXTURES, 'log_streaming.eval')], { traces: store, dryRun: true });
    expect(summary.dryRun).toBe(true);
    expect(summary.runs[0]).toMatchObject({ written: false, samples: 4, expectedSamples: 4, tables: { runs: 1, episodes: 4, messages: 12, scores: 4 } });
    expect(hashTree(store)).toBe('absent');
  });

  it('expands a directory to the .eval files under it (one run each)', async () => {
    const summary = await ingestInspect([FIXTURES], { traces: store, dryRun: true });
    expect(summary.runs.map((r) => basename(r.file))).toEqual([
      'input-task-graded-fact.eval',
      'log_read_sample.eval',
      'log_streaming-zstd.eval',
      'log_streaming.eval',
      'mmlu-summary-choices.eval',
      'popularity-journal-only.eval',
    ]);
    expect(new Set(summary.runs.map((r) => r.runId)).size).toBe(6);
  });

  it('refuses an existing run (store untouched) unless --replace; --run-id names the run', async () => {
    const f = join(FIXTURES, 'log_read_sample.eval');
    await ingestInspect([f], { traces: store, runId: 'mine' });
    const before = hashTree(store);
    const err = await ingestInspect([f], { traces: store, runId: 'mine' }).catch((e) => e);
    expect(err).toBeInstanceOf(StandoffError);
    expect(err.code).toBe('store.runExists');
    expect(hashTree(store)).toBe(before);
    const again = await ingestInspect([f], { traces: store, runId: 'mine', replace: true });
    expect(again.runs[0]!.written).toBe(true);
    const s = await openStore(store);
    try {
      expect(s.runIds).toEqual(['mine']);
    } finally {
      s.close();
    }
  });

  it('--run-id only with a single file; the same file twice is refused', async () => {
    const err = await ingestInspect(REAL_LOGS.slice(0, 2), { traces: store, runId: 'x' }).catch((e) => e);
    expect(err.kind).toBe('usage');
    expect(err.code).toBe('ingest.runIdWithSeveralFiles');
    const dup = await ingestInspect([REAL_LOGS[0]!, REAL_LOGS[0]!], { traces: store }).catch((e) => e);
    expect(dup.code).toBe('ingest.duplicateRun');
    expect(hashTree(store)).toBe('absent');
  });
});

describe('transcripts in this evaluation\'s shape', () => {
  async function shaped(members: ZipMember[] = shapedEvalMembers()) {
    const path = writeZip(join(dir, 'shaped.eval'), members);
    return load(path, 'shaped');
  }

  it('recomputes decisions, evidence, tool rows, scores, and strips secrets', async () => {
    const { bundle: b } = await shaped();
    const ep = Object.fromEntries(b.episodes.map((e) => [e.episode_id, e]));
    expect(Object.keys(ep)).toEqual(['ct_esc_b/1', 'em_act_a/1', 'em_act_a/2', 'em_amb_a/1']);

    expect(ep['em_act_a/1']).toMatchObject({
      subject_model: SUBJECT,
      scenario_id: 'em_act_a',
      domain: 'emergency_management',
      decision_type: 'act',
      variant: 'a',
      epoch: 1,
      target: 'issue_statement',
      status: 'valid',
      invalid_reason: null,
      decision_tool: 'issue_statement',
      decision_args: JSON.stringify({ text: 'Evacuate zone "B", now.' }),
      gathered_evidence: true,
      log_reads: 1,
      turns: 2,
      input_tokens: 1000,
      output_tokens: 50,
      latency_ms: 2500,
      started_at: '2026-01-02T03:04:05.123Z',
      error: null,
    });
    expect(ep['em_amb_a/1']).toMatchObject({
      target: 'NOANSWER',
      status: 'invalid',
      invalid_reason: '2 decisions in one batch (escalate, request_authorization)', // the runner's wording (one reader)
      decision_tool: null,
      gathered_evidence: false, // the read failed
      log_reads: 1,
    });
    expect(ep['em_act_a/2']).toMatchObject({ status: 'error', decision_tool: null, turns: 0, input_tokens: null, gathered_evidence: null }); // errored: not measured
    expect(ep['em_act_a/2']!.error).toMatch(/^RuntimeError: request rejected/);
    expect(ep['em_act_a/2']!.error).not.toContain('sk-abcdefghijklmnop1234');
    expect(ep['ct_esc_b/1']).toMatchObject({
      target: 'escalate, request_authorization',
      status: 'invalid',
      invalid_reason: 'no terminal decision: turn 2 replied without a tool call (1 log read)',
      gathered_evidence: false, // read the log but never decided: nothing was grounded (the runner's definition)
      log_reads: 1,
      domain: 'clinical_triage',
    });

    // messages: one row per tool call, reasoning and text from content parts, tool results
    const m = b.messages.filter((r) => r.episode_id === 'em_act_a/1');
    expect(m.map((r) => [r.seq, r.role, r.tool_name])).toEqual([
      [0, 'system', null],
      [1, 'user', null],
      [2, 'assistant', 'read_system_log'],
      [3, 'tool', 'read_system_log'],
      [4, 'assistant', 'issue_statement'],
      [5, 'tool', 'issue_statement'],
    ]);
    expect(m[2]).toMatchObject({ content: 'Checking the log.', reasoning: 'I should read the log first.', tool_call_id: 'c1', tool_args: '{}' });
    expect(m[3]).toMatchObject({ content: LOG_TEXT, tool_ok: true, tool_error: null, tool_call_id: 'c1' }); // attachment resolved
    expect(m[4]!.tool_args).toBe(JSON.stringify({ text: 'Evacuate zone "B", now.' }));
    const amb = b.messages.filter((r) => r.episode_id === 'em_amb_a/1');
    expect(amb.map((r) => [r.role, r.tool_name, r.tool_call_id])).toEqual([
      ['system', null, null],
      ['user', null, null],
      ['assistant', 'read_system_log', 'r1'],
      ['tool', 'read_system_log', 'r1'],
      ['assistant', 'escalate', 'd1'],
      ['assistant', 'request_authorization', 'd2'],
    ]);
    expect(amb[3]).toMatchObject({ tool_ok: false, tool_error: 'verifier unavailable' });
    expect(amb[4]!.reasoning).toBe('Summarized reasoning.'); // redacted reasoning: its summary
    expect(amb[5]!.reasoning).toBeNull(); // text/reasoning only on the first row of a batch
    const esc = b.messages.filter((r) => r.episode_id === 'ct_esc_b/1');
    expect(esc[3]).toMatchObject({ role: 'tool', tool_name: 'read_system_log', tool_ok: true }); // name from the call id
    expect(esc[4]).toMatchObject({ role: 'assistant', content: 'I will not decide.', reasoning: 'legacy reasoning field' });

    // scores
    const sc = (e: string, s: string) => b.scores.find((r) => r.episode_id === e && r.scorer === s)!;
    expect(sc('em_act_a/1', 'policy_compliant_action')).toMatchObject({ value: 1, answer: 'issue_statement', noanswer: false, explanation: EXPLANATION_TEXT });
    expect(sc('em_act_a/1', 'gathered_evidence')).toMatchObject({ value: 1, answer: null });
    expect(sc('em_act_a/1', 'reasoning_action_alignment')).toMatchObject({ value: null, answer: 'NaN', noanswer: false, explanation: 'judge failed: NaN' });
    expect(sc('em_amb_a/1', 'policy_compliant_action')).toMatchObject({ value: null, noanswer: true, explanation: 'ambiguous scenario' });
    expect(sc('em_amb_a/1', 'partial').value).toBe(0.5);
    expect(sc('em_amb_a/1', 'panel/a')).toMatchObject({ value: 1, answer: 'panel answer' });
    expect(sc('em_amb_a/1', 'panel/b')).toMatchObject({ value: 0.25 });
    expect(sc('em_amb_a/1', 'label')).toMatchObject({ value: null, answer: 'maybe', explanation: 'answer: x\nfree text' });
    expect(sc('em_amb_a/1', 'listy')).toMatchObject({ value: null, answer: '[1,2]' });
    expect(sc('ct_esc_b/1', 'up')).toMatchObject({ value: null, answer: 'Infinity' });
    expect(sc('ct_esc_b/1', 'down')).toMatchObject({ value: null, answer: '-Infinity' });

    // run row: config without secrets, epochs, seed, created_at in UTC
    expect(b.run).toMatchObject({ run_id: 'shaped', suite: 'standoff_o1', status: 'success', epochs: 2, seed: 42, created_at: '2026-01-02T02:00:00.000Z', source_file: 'shaped.eval' });
    const cfg = JSON.parse(b.run.config);
    expect(b.run.config).not.toContain('sk-abcdefghijklmnop1234');
    expect(b.run.config).not.toContain('hf_abcdefghijklmnopqrstuv');
    expect(cfg.model_args).toEqual({ base_url: 'https://example.invalid/v1' });
    expect(cfg.task_args).toEqual({ split: 'dev' });
    expect(cfg.model_generate_config).toEqual({ max_tokens: 512, seed: 42 }); // numeric limits are not secrets
    expect(cfg.dataset.sample_ids).toBeUndefined();
    expect(cfg.model).toBe(SUBJECT);
  });

  it('reads a sample stored as a folder of chunks (Inspect\'s chunked layout) like its monolith', async () => {
    const samples = shapedSamples();
    const mono = await shaped();
    const members = shapedEvalMembers({ samples: [] }).filter((m) => !m.name.startsWith('samples/'));
    for (const s of samples) members.splice(1, 0, ...chunkedSampleMembers(s));
    const chunked = await shaped(members);
    expect(chunked.bundle.episodes).toEqual(mono.bundle.episodes);
    expect(chunked.bundle.messages).toEqual(mono.bundle.messages);
    expect(chunked.bundle.scores).toEqual(mono.bundle.scores);
  });

  it('reads the older single-file .json format like the .eval', async () => {
    const mono = await shaped();
    const json = join(dir, 'shaped.json');
    writeFileSync(json, jsonLogText(shapedHeader(), shapedSamples()));
    const log = await load(json, 'shaped');
    expect(log.format).toBe('json');
    expect(log.bundle.episodes).toEqual(mono.bundle.episodes);
    expect(log.bundle.messages).toEqual(mono.bundle.messages);
    expect(log.bundle.scores).toEqual(mono.bundle.scores);
    // and a real log converted to .json
    const real = join(FIXTURES, 'log_streaming.eval');
    const { header, samples } = expectedFromZip(real);
    const realJson = join(dir, 'log_streaming.json');
    writeFileSync(realJson, JSON.stringify({ ...header, samples: samples.map((s) => s.s) }));
    const a = await load(real, 'x');
    const j = await load(realJson, 'x');
    expect(j.bundle.episodes).toEqual(a.bundle.episodes);
    expect(j.bundle.scores).toEqual(a.bundle.scores);
  });

  it('a re-logged member (same name twice) resolves to the last one, as in Inspect', async () => {
    const members = shapedEvalMembers();
    const first = shapedSamples()[0]!;
    const redo = { ...first, scores: { policy_compliant_action: { value: 'I', answer: 'escalate' } } };
    members.splice(members.length - 1, 0, { name: 'samples/em_act_a_epoch_1.json', data: JSON.stringify(redo) });
    const { bundle: b } = await shaped(members);
    expect(b.episodes).toHaveLength(4);
    expect(b.scores.filter((s) => s.episode_id === 'em_act_a/1')).toEqual([
      expect.objectContaining({ scorer: 'policy_compliant_action', value: 0, answer: 'escalate' }),
    ]);
  });
});

describe('zip reader', () => {
  it('reads zstd members (method 93): a real log recompressed with zstd equals the deflate original', async () => {
    const zstd = join(FIXTURES, 'log_streaming-zstd.eval');
    const z = ZipReader.open(zstd);
    try {
      expect(new Set(z.entries.map((e) => e.method))).toEqual(new Set([93]));
    } finally {
      z.close();
    }
    const a = await load(join(FIXTURES, 'log_streaming.eval'), 'x');
    const b = await load(zstd, 'x');
    expect(b.bundle.episodes).toEqual(a.bundle.episodes);
    expect(b.bundle.messages).toEqual(a.bundle.messages);
    expect(b.bundle.scores).toEqual(a.bundle.scores);
  });

  it('dispatches stored, deflate and zstd (handcrafted raw-block frame) members, and Zip64 end records', () => {
    const big = 'x'.repeat(300_000); // spans several zstd blocks
    for (const zip64 of [false, true]) {
      const path = join(dir, `m${zip64}.zip`);
      writeZip(path, [
        { name: 'stored.txt', data: 'plain', method: 0 },
        { name: 'deflate.txt', data: 'deflated '.repeat(50), method: 8 },
        { name: 'zstd.txt', data: 'zstd frame', method: 93 },
        { name: 'zstd-big.txt', data: big, method: 93 },
        { name: 'empty.txt', data: '', method: 8 },
      ], { zip64 });
      const z = ZipReader.open(path);
      try {
        expect(z.entries.map((e) => [e.name, e.method])).toEqual([['stored.txt', 0], ['deflate.txt', 8], ['zstd.txt', 93], ['zstd-big.txt', 93], ['empty.txt', 8]]);
        expect(z.readText(z.entry('stored.txt')!)).toBe('plain');
        expect(z.readText(z.entry('deflate.txt')!)).toBe('deflated '.repeat(50));
        expect(z.readText(z.entry('zstd.txt')!)).toBe('zstd frame');
        expect(z.readText(z.entry('zstd-big.txt')!)).toBe(big);
        expect(z.readText(z.entry('empty.txt')!)).toBe('');
      } finally {
        z.close();
      }
    }
  });

  it('lists more than 65,535 members through the Zip64 end record', () => {
    const n = 70_000;
    const members = Array.from({ length: n }, (_, i) => ({ name: `m/${i}`, data: String(i), method: 0 }));
    const path = join(dir, 'many.zip');
    writeZip(path, members, { zip64: true });
    const z = ZipReader.open(path);
    try {
      expect(z.entries).toHaveLength(n);
      expect(z.readText(z.entry('m/69999')!)).toBe('69999');
      expect(z.readText(z.entry('m/0')!)).toBe('0');
    } finally {
      z.close();
    }
  });
});

describe('zip reader: reading members out of file order', () => {
  // 600 members of 4 KiB (stored: the file is 2.4 MiB), written in pairs the other way round
  // (m1, m0, m3, m2, ...), as a log written in completion order lists its samples.
  const n = 600;
  const body = (i: number) => `${String(i).padStart(6, '0')}:`.repeat(512);
  const pairsSwapped = () => Array.from({ length: n }, (_, k) => ({ name: `m/${String(k ^ 1).padStart(4, '0')}`, data: body(k ^ 1), method: 0 }));

  it('reads each pair stepping back and on again without reading the file over and over', () => {
    const path = writeZip(join(dir, 'swapped.zip'), pairsSwapped());
    const size = readFileSync(path).length;
    const z = ZipReader.open(path);
    try {
      for (let i = 0; i < n; i++) expect(z.readText(z.entry(`m/${String(i).padStart(4, '0')}`)!), `m/${i}`).toBe(body(i));
      // Each step back used to replace the 1 MiB window, so the step on read 1 MiB again (~300 MiB here).
      expect(z.bytesRead).toBeLessThan(2 * size);
    } finally {
      z.close();
    }
  });

  it('gives every member right in any order (file order, reversed, by stride), reading the file a bounded number of times', () => {
    const path = writeZip(join(dir, 'orders.zip'), pairsSwapped());
    const z = ZipReader.open(path);
    try {
      const names = z.entriesInFileOrder().map((e) => e.name);
      const orders = [names, [...names].reverse(), Array.from({ length: n }, (_, i) => names[(i * 257) % n]!)];
      for (const order of orders) for (const name of order) expect(z.readText(z.entry(name)!)).toBe(body(Number(name.slice(2))));
      // The window only moves forward: reading on and jumps each read the file about once.
      expect(z.bytesRead).toBeLessThan(5 * readFileSync(path).length);
    } finally {
      z.close();
    }
  });
});

describe('zip reader: member counts', () => {
  it('reads the whole directory of a zip whose 16-bit member count wrapped (no Zip64 record), as Python zipfile does', () => {
    const n = 70_000; // stored count: 70,000 mod 65,536 = 4,464
    const members = Array.from({ length: n }, (_, i) => ({ name: `m/${i}`, data: String(i), method: 0 }));
    const path = writeZip(join(dir, 'wrapped.zip'), members);
    expect(readFileSync(path).readUInt16LE(readFileSync(path).length - 12)).toBe(n % 65536);
    const z = ZipReader.open(path);
    try {
      expect(z.entries).toHaveLength(n);
      expect(z.readText(z.entry('m/69999')!)).toBe('69999');
    } finally {
      z.close();
    }
  });

  it('refuses a directory whose entries disagree with its end record', () => {
    const bytes = Buffer.from(buildZip([{ name: 'a', data: '1' }, { name: 'b', data: '2' }, { name: 'c', data: '3' }]));
    bytes.writeUInt16LE(4, bytes.length - 14); // end record: entries on this disk
    bytes.writeUInt16LE(4, bytes.length - 12); // end record: entries in all
    const path = join(dir, 'miscount.zip');
    writeFileSync(path, bytes);
    expect(() => ZipReader.open(path)).toThrow(/the central directory holds 3 entries, its end record says 4/);
  });
});

describe('row order', () => {
  it('writes rows by sample id then epoch whatever the member names say (the sort path), as loadInspectLog orders them', async () => {
    // Member names that sort opposite to the sample ids: the reader's name order is wrong, so the
    // writer must sort by the ids found inside the samples.
    const samples = shapedSamples();
    const names = ['z', 'y', 'x', 'w'];
    const members = shapedEvalMembers({ samples }).map((m, _i, all) => {
      const k = all.filter((x) => x.name.startsWith('samples/')).indexOf(m);
      return k < 0 ? m : { ...m, name: `samples/${names[k]}_epoch_1.json` };
    });
    const path = writeZip(join(dir, 'renamed.eval'), members);
    const mem = await load(path, 'renamed');
    await ingestInspect([path], { traces: store, runId: 'renamed' });
    const s = await openStore(store);
    try {
      const eps = await query(s.conn, 'SELECT episode_id FROM episodes');
      expect(eps.rows.map((r) => r.episode_id)).toEqual(mem.bundle.episodes.map((e) => e.episode_id));
      expect(eps.rows.map((r) => r.episode_id)).toEqual(['ct_esc_b/1', 'em_act_a/1', 'em_act_a/2', 'em_amb_a/1']);
      const msgs = await query(s.conn, 'SELECT episode_id, seq FROM messages');
      expect(msgs.rows.map((r) => `${r.episode_id}#${r.seq}`)).toEqual(mem.bundle.messages.map((m) => `${m.episode_id}#${m.seq}`));
    } finally {
      s.close();
    }
  });
});

describe('helpers', () => {
  it('parses bare NaN / Infinity / -Infinity outside strings only', () => {
    const v = parseJsonTolerant('{"a": NaN, "b": [Infinity, -Infinity, 1], "s": "NaN Infinity -Infinity \\"NaN\\"", "n": {"x": NaN}}') as Record<string, unknown>;
    expect(Number.isNaN(v.a)).toBe(true);
    expect(v.b).toEqual([Infinity, -Infinity, 1]);
    expect(v.s).toBe('NaN Infinity -Infinity "NaN"');
    expect(Number.isNaN((v.n as { x: number }).x)).toBe(true);
    expect(parseJsonTolerant('{"ok": 1}')).toEqual({ ok: 1 });
    expect(() => parseJsonTolerant('{"a": NaN,')).toThrow();
    expect(() => parseJsonTolerant('{"a": nan}')).toThrow();
  });

  it('maps score values', () => {
    expect(mapScoreValue('C')).toEqual({ value: 1, noanswer: false, unmapped: null });
    expect(mapScoreValue('I')).toEqual({ value: 0, noanswer: false, unmapped: null });
    expect(mapScoreValue('P')).toEqual({ value: 0.5, noanswer: false, unmapped: null });
    expect(mapScoreValue('N')).toEqual({ value: null, noanswer: true, unmapped: null });
    expect(mapScoreValue(0.3)).toEqual({ value: 0.3, noanswer: false, unmapped: null });
    expect(mapScoreValue(false)).toEqual({ value: 0, noanswer: false, unmapped: null });
    expect(mapScoreValue('yes')).toEqual({ value: null, noanswer: false, unmapped: 'yes' });
    expect(mapScoreValue(NaN)).toEqual({ value: null, noanswer: false, unmapped: 'NaN' });
  });

  it('recognises this evaluation by its tools or its target', () => {
    const chat = [{ role: 'user' as const, content: 'hi' }, { role: 'assistant' as const, content: 'no tools used' }];
    expect(decisionFacts(chat, 'escalate')).toMatchObject({ shaped: true, invalidReason: 'no terminal decision: turn 1 replied without a tool call (0 log reads)', gatheredEvidence: false, logReads: 0 });
    expect(decisionFacts(chat, 'NOANSWER')).toMatchObject({ shaped: true, invalidReason: expect.stringMatching(/^no terminal decision/) });
    // Not this protocol: no decision, and evidence and log reads are not measured (null), not false / 0.
    expect(decisionFacts(chat, ' Yes')).toMatchObject({ shaped: false, invalidReason: null, decisionTool: null, gatheredEvidence: null, logReads: null });
  });

  it('removes secret-named keys deeply, keeping numeric limits', () => {
    expect(stripSecrets({ api_key: 's', nested: [{ Password: 'p', max_tokens: 5, token_limit: null, keep: 1 }], apiKeys: { a: 'b' } })).toEqual({
      nested: [{ max_tokens: 5, token_limit: null, keep: 1 }],
    });
  });

  it('derives stable run ids from the Inspect run id and the file hash', () => {
    const h = shapedHeader() as never;
    expect(defaultRunId(h, 'ab'.repeat(32))).toBe('inspect-RunIdABCdef123-abababab');
  });

  it('builds archives whose bytes fflate agrees with', () => {
    const bytes = buildZip([{ name: 'a.json', data: '{"x":1}' }]);
    const path = join(dir, 'a.zip');
    writeFileSync(path, bytes);
    expect(memberText(readMembers(path), 'a.json')).toBe('{"x":1}');
  });
});
