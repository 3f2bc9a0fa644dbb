/**
 * The columnar CSV ingest: what `ingestCsv` writes (columns through data chunks) equals what the
 * row path writes for the same checked rows (`buildCsvRun` + `writeRun` of row objects), for every
 * fixture and mapping feature; the key indexes, dictionary columns and the number fast path agree
 * with their plain definitions.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildCsvRun, checkCsvRun, ingestCsv, IngestError } from '../../src/ingest/ingest-csv.ts';
import { DenseTriples, EpisodeKeys, TextColumn, TripleIndex, DICT_LIMIT } from '../../src/ingest/csv/columns.ts';
import { isDecimalLiteral, simpleDecimal } from '../../src/ingest/csv/rows.ts';
import { writeRun } from '../../src/store/write-run.ts';
import { openStore } from '../../src/store/open-store.ts';
import { query } from '../../src/store/duckdb.ts';
import { TABLES, TABLE_NAMES, sqlColumns, type TableName } from '../../src/schema/tables.ts';

const FIX = resolve(import.meta.dirname, '../fixtures/csv');
const fx = (name: string) => join(FIX, name);

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'standoff-csvcol-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Every table of a store, rows as sorted JSON (timestamps to the microsecond). */
async function dump(store: string): Promise<Record<string, string[]>> {
  const s = await openStore(store);
  try {
    const out: Record<string, string[]> = {};
    for (const table of TABLE_NAMES) {
      const cols = sqlColumns(table)
        .map((c) => (c.type === 'TIMESTAMP' ? `strftime("${c.name}", '%Y-%m-%dT%H:%M:%S.%fZ') AS "${c.name}"` : `"${c.name}"`))
        .join(', ');
      const { rows } = await query(s.conn, `SELECT ${cols} FROM ${table} ORDER BY ALL`);
      out[table] = rows.map((r) => JSON.stringify(r));
    }
    return out;
  } finally {
    s.close();
  }
}

/** Ingests through the columnar path and through row objects; both stores must hold the same rows. */
async function samePaths(files: string[], map?: Parameters<typeof ingestCsv>[1]['map'], zodEvery = 1) {
  const d = tempDir();
  const now = new Date('2026-08-10T15:02:57.000Z');
  const a = join(d, 'columnar');
  const b = join(d, 'rows');
  const summary = await ingestCsv(files, { traces: a, map, runId: 'same', now });
  const { bundle } = await buildCsvRun(files, { traces: b, map, runId: 'same', now });
  // The row objects are what zod accepts...
  for (const t of Object.keys(TABLES) as TableName[]) {
    const rows = t === 'runs' ? [bundle.run] : ((bundle[t] as unknown[] | undefined) ?? []);
    for (let i = 0; i < rows.length; i += zodEvery) {
      const row = rows[i];
      if (!TABLES[t].safeParse(row).success) expect.fail(`${t}: ${JSON.stringify(row)}`);
    }
  }
  // ...and the columns are written exactly as those rows would be.
  await writeRun(b, bundle);
  const left = await dump(a);
  const right = await dump(b);
  for (const t of TABLE_NAMES) expect(left[t], t).toEqual(right[t]);
  return { summary, bundle, rows: left };
}

function csv(dir: string, name: string, lines: string[]): string {
  const f = join(dir, name);
  writeFileSync(f, lines.join('\n') + '\n');
  return f;
}

describe('columnar ingest writes what the row path writes', () => {
  it('for every fixture: episodes with scores, BOM and CRLF, judgments, probe answers, aggregates', async () => {
    const r = await samePaths([fx('episodes.csv')]);
    expect(r.rows.episodes).toHaveLength(6);
    expect(r.rows.scores).toHaveLength(5);
    await samePaths([fx('episodes-bom-crlf.csv')]);
    const all = await samePaths([fx('judgments.csv'), fx('probe-answers.csv'), fx('seed-published-table.csv')]);
    expect(all.rows.judgments).toHaveLength(3);
    expect(all.rows.probe_answers).toHaveLength(3);
    expect(all.rows.aggregates).toHaveLength(12);
  });

  it('with a mapping file: value maps, constants, several score columns with answers', async () => {
    const r = await samePaths([fx('mapped-episodes.csv')], fx('mapped-episodes.map.json'));
    expect(r.rows.scores).toHaveLength(8);
  });

  it('with every column type, timestamps with offsets, JSON, nulls and value maps', async () => {
    const d = tempDir();
    const f = csv(d, 'types.csv', [
      'model,scenario,epoch,status,gathered,reads,tokens,latency,started,args,decided,score,why,family',
      '"m, with space ",s1, 3.0 ,valid,YES,+2,1e3,-0.5,2026-08-10T17:02:57+02:00,"{""tool"":""escalate""}",escalate,p,because,fam',
      'm2,s1,1, invalid ,n,0,,12,2026-08-10T15:02:57.123456Z,,,Correct,,fam',
      'm3,s1,1,error,C,0,7, 8 ,,[],,0.25,"multi\nline",',
      'm3,s2,1,error,C,0,7,-0,,[],,,"",x',
    ]);
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
        subject_family: 'family',
      },
      values: { subject_family: { x: null, fam: 'family-x' } },
      constants: { domain: 'clinical_triage', turns: 4, variant: 'b' },
      scores: [
        { scorer: 's', column: 'score', explanation: 'why', values: { p: 0.5 } },
        { scorer: 'g', column: 'gathered' },
      ],
    };
    const r = await samePaths([f], map);
    expect(r.rows.episodes).toHaveLength(4);
    expect(r.rows.scores).toHaveLength(7);
  });

  it('with given and derived episode ids in one run, across files', async () => {
    const d = tempDir();
    const given = csv(d, 'given.csv', ['episode_id,model,sample_id,score', 'e-1,m,s1,C', 'e-2,m,s2,I']);
    const derived = csv(d, 'derived.csv', ['model,sample_id,epoch,score', 'm,s1,1,C', 'm,s1,2,N']);
    const r = await samePaths([given, derived]);
    expect(r.bundle.episodes!.map((e) => e.episode_id)).toEqual(['e-1', 'e-2', 'm/s1/1', 'm/s1/2']);
    expect(r.bundle.scores!.map((s) => s.episode_id)).toEqual(['e-1', 'e-2', 'm/s1/1', 'm/s1/2']);
    const r2 = await samePaths([derived, given]);
    expect(r2.bundle.episodes!.map((e) => e.episode_id)).toEqual(['m/s1/1', 'm/s1/2', 'e-1', 'e-2']);
  });

  it('with more distinct values than a dictionary holds', async () => {
    const d = tempDir();
    const n = DICT_LIMIT + 500;
    const lines = ['model,sample_id,epoch,score,answer'];
    for (let i = 0; i < n; i++) lines.push(`m${i % 3},sample-${i},${1 + (i % 2)},${i % 2 ? 'C' : 'I'},a${i}`);
    const f = csv(d, 'many.csv', lines);
    const { bundle } = await checkCsvRun([f], { traces: join(d, 't'), runId: 'many' });
    expect(bundle.episodes!.columns.scenario_id!.kind).toBe('values');
    expect(bundle.episodes!.columns.subject_model!.kind).toBe('dict');
    const r = await samePaths([f], undefined, 97);
    expect(r.rows.episodes).toHaveLength(n);
    expect(r.bundle.scores!.at(-1)).toMatchObject({ episode_id: `m${(n - 1) % 3}/sample-${n - 1}/${1 + ((n - 1) % 2)}`, answer: `a${n - 1}` });
  });
});

describe('duplicate episode keys', () => {
  it("are the joined strings: 'a/b' + 'c' and 'a' + 'b/c' collide, as before", async () => {
    const d = tempDir();
    const f = csv(d, 'slash.csv', ['model,sample_id,epoch', 'x/y,s,1', 'a/b,c,1', 'a,b/c,1', 'a,b/c,2']);
    const err = await ingestCsv([f], { traces: join(d, 't') }).catch((e) => e);
    expect(err).toBeInstanceOf(IngestError);
    expect(err.errors).toEqual([`${f}: line 4, field "episode_id": duplicate episode "a/b/c/1" (first on line 3)`]);
  });

  it('are found in any order and across files, naming the first occurrence', async () => {
    const d = tempDir();
    const a = csv(d, 'a.csv', ['model,sample_id,epoch', 'm,s1,1', 'm,s2,1', 'n,s1,300', 'm,s1,-5']);
    const b = csv(d, 'b.csv', ['model,sample_id,epoch', 'n,s1,300', 'm,s1,-5', 'm,s3,1']);
    const err = await ingestCsv([a, b], { traces: join(d, 't') }).catch((e) => e);
    expect(err.errors).toEqual([
      `${b}: line 2, field "episode_id": duplicate episode "n/s1/300" (first on line 4 of ${a})`,
      `${b}: line 3, field "episode_id": duplicate episode "m/s1/-5" (first on line 5 of ${a})`,
    ]);
  });

  /** A tiny deterministic generator. */
  function rng(seed: number) {
    return (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
      return seed % n;
    };
  }

  it('DenseTriples and TripleIndex agree with a Map of the same keys', () => {
    const rnd = rng(42);
    for (let trial = 0; trial < 150; trial++) {
      const dense = new DenseTriples();
      const hash = new TripleIndex();
      const ref = new Map<string, number>();
      const A = 1 + rnd(20);
      const B = 1 + rnd(300);
      const C = 1 + rnd(trial % 4 === 0 ? 5_000_000 : 400);
      const base = rnd(3) === 0 ? -1000 : 1;
      const n = rnd(4000);
      for (let i = 0; i < n; i++) {
        const a = rnd(A);
        const b = rnd(B);
        const c = base + rnd(C) - (rnd(60) === 0 ? 2_000_000_000 : 0);
        const key = `${a},${b},${c}`;
        const want = ref.get(key) ?? -1;
        if (want < 0) ref.set(key, i);
        const got = [dense.add(a, b, c, i), hash.add(a, b, c, i)];
        if (got[0] !== want || got[1] !== want) expect.fail(`trial ${trial}, key ${key}: ${got} instead of ${want}`);
      }
      const seen: string[] = [];
      dense.forEach((a, b, c, w) => seen.push(`${a},${b},${c}=${w}`));
      expect(seen.sort()).toEqual([...ref].map(([k, w]) => `${k}=${w}`).sort());
    }
  });

  it('EpisodeKeys agree with joined-string keys, also after switching to strings', () => {
    const rnd = rng(7);
    for (let trial = 0; trial < 60; trial++) {
      const subjects = new TextColumn();
      const scenarios = new TextColumn();
      const keys = new EpisodeKeys(subjects, scenarios);
      const ref = new Map<string, number>();
      const parts = ['a', 'b', 'a/b', 'b/c', 'c', 'x/y/z', ''];
      const slashy = trial % 2 === 0;
      for (let i = 0; i < 500; i++) {
        const s = slashy ? parts[rnd(parts.length)]! : `m${rnd(4)}`;
        const c = slashy ? parts[rnd(parts.length)]! : `s${rnd(30)}`;
        const e = rnd(5) - 1;
        const key = [s, c, e].join('/');
        const want = ref.get(key) ?? -1;
        if (want < 0) ref.set(key, i * 64);
        expect(keys.add(s, c, e, i * 64), key).toBe(want);
      }
      if (slashy) expect(keys.stringMode).toBe(true);
      else expect(keys.stringMode).toBe(false);
    }
  });
});

describe('number fast path', () => {
  it('simpleDecimal is Number() for the literals it takes, NaN otherwise', () => {
    const rnd = (n: number) => Math.floor(Math.random() * n);
    const fixed = ['0', '-0', '+0', '.5', '5.', '-.5', '0.1', '0.30000000000000004', '123456789012345', '1234567890123456', '3.7', '1e3', '', '-', '.', '1.2.3', '00012.50', '+', '1,5', ' 1'];
    const cases = [...fixed];
    for (let k = 0; k < 20_000; k++) {
      const nd = 1 + rnd(17);
      const dot = rnd(nd + 2);
      let s = ['', '-', '+'][rnd(3)]!;
      for (let j = 0; j < nd; j++) s += (j === dot ? '.' : '') + String(rnd(10));
      cases.push(s);
    }
    for (const s of cases) {
      const x = simpleDecimal(s);
      if (Number.isNaN(x)) continue;
      expect(isDecimalLiteral(s), s).toBe(true);
      expect(Object.is(x, Number(s)), s).toBe(true);
    }
    expect(simpleDecimal('1e3')).toBeNaN();
    expect(simpleDecimal('1234567890123456')).toBeNaN(); // 16 digits: left to Number()
    expect(Object.is(simpleDecimal('-0'), -0)).toBe(true);
  });
});
