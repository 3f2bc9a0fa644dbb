/**
 * Bench: a 1 GB Inspect `.eval` with 200,000 samples, ingested for real (written to the store).
 *
 * The log is written as a stream (fflate's `Zip`, deflate level 1): each sample a six-message
 * tool-using transcript whose log read is a ~5.8 KB attachment of random base64, so the archive
 * is about 1 GB and does not compress away. More than 65,535 members: like other streaming zip
 * writers, fflate stores the member count modulo 65,536 (no zip64 record), which the reader
 * handles as Python's zipfile does (the directory is read by its size).
 *
 * Timed, each in a child process of its own so the peak RSS is the ingest's alone:
 *   - `standoff ingest inspect` (read, map, validate, stage, write Parquet, commit);
 *   - the same log read by Python's zipfile + json.loads of every sample member (what any reader
 *     of the log must at least do; Inspect itself reads logs with zipfile), as the baseline.
 * The target is the issue's: the log ingests without loading the archive into memory, so the
 * peak RSS is reported against the archive's size (and the uncompressed size of its members).
 *
 * Run alone: `npx tsx bench/ingest-inspect-large.ts [samples] [attachment-chars]`.
 */
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { Zip, ZipDeflate, strToU8 } from 'fflate';

export interface IngestInspectLargeBench {
  name: 'ingest-inspect-large';
  samples: number;
  fileBytes: number;
  /** Sum of the members' uncompressed sizes. */
  uncompressedBytes: number;
  ingestSeconds: number;
  samplesPerSecond: number;
  ingestPeakRssMb: number;
  /** Python zipfile + json.loads of every sample, same file. */
  pythonSeconds: number | null;
  pythonPeakRssMb: number | null;
  /** ingestSeconds / pythonSeconds. */
  ratio: number | null;
  rows: Record<string, number>;
}

const MODEL = 'openai/gpt-oss-120b';
const DECISIONS = ['escalate', 'request_authorization', 'withdraw', 'issue_statement'];

/** A deterministic generator (xorshift32) for the attachment bytes. */
function randomBase64(state: { s: number }, chars: number): string {
  const bytes = Buffer.allocUnsafe(Math.ceil((chars * 3) / 4));
  let s = state.s;
  for (let i = 0; i < bytes.length; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    bytes[i] = s & 0xff;
  }
  state.s = s;
  return bytes.toString('base64').slice(0, chars);
}

/** Streams a `.eval` with `n` samples to `path`; returns the members' uncompressed bytes. */
export async function writeLargeEval(path: string, n: number, attachmentChars: number): Promise<number> {
  const out = createWriteStream(path, { highWaterMark: 1 << 22 });
  let raw = 0;
  let failure: Error | null = null;
  const zip = new Zip((err, data, final) => {
    if (err) failure = err;
    else out.write(data);
    if (final) out.end();
  });
  const add = (name: string, text: string) => {
    const bytes = strToU8(text);
    raw += bytes.length;
    const f = new ZipDeflate(name, { level: 1 });
    zip.add(f);
    f.push(bytes, true);
  };
  const eval_ = {
    run_id: 'LargeRun', created: '2026-01-01T00:00:00+00:00', task: 'standoff_o1', model: MODEL, config: { epochs: 1 },
    task_args: {}, model_args: {}, dataset: { name: 'large', samples: n }, packages: { inspect_ai: '0.3.999' },
  };
  add('_journal/start.json', JSON.stringify({ version: 2, eval: eval_, plan: { name: 'plan', steps: [] } }));
  const rng = { s: 2463534242 };
  for (let i = 0; i < n; i++) {
    const hash = `a${i.toString(16).padStart(31, '0')}`;
    const d = DECISIONS[i % 4]!;
    const sample = {
      id: i + 1, epoch: 1, input: `Situation ${i}`, target: DECISIONS[(i + 1) % 4],
      messages: [
        { id: `s${i}`, role: 'system', content: 'You are an operations agent responsible for one high-stakes decision.' },
        { id: `u${i}`, role: 'user', content: `Situation ${i}: the policy says to check the log before acting.` },
        { id: `a${i}`, role: 'assistant', content: 'Reading the log first.', tool_calls: [{ id: `r${i}`, function: 'read_system_log', arguments: {}, type: 'function' }] },
        { id: `t${i}`, role: 'tool', content: `attachment://${hash}`, tool_call_id: `r${i}`, function: 'read_system_log' },
        { id: `b${i}`, role: 'assistant', content: `Decision for ${i}.`, tool_calls: [{ id: `d${i}`, function: d, arguments: { reason: 'the log' }, type: 'function' }] },
        { id: `o${i}`, role: 'tool', content: 'recorded', tool_call_id: `d${i}`, function: d },
      ],
      scores: { policy_compliant_action: { value: i % 3 ? 'C' : 'I', answer: d } },
      metadata: { domain: 'emergency_management', decision_type: 'act' },
      store: {}, events: [],
      attachments: { [hash]: randomBase64(rng, attachmentChars) },
    };
    add(`samples/${i + 1}_epoch_1.json`, JSON.stringify(sample));
    if (failure) throw failure;
    if (out.writableLength > 1 << 24) await once(out, 'drain');
  }
  add('summaries.json', '[]');
  add('header.json', JSON.stringify({
    version: 2, status: 'success', eval: eval_, plan: { name: 'plan', steps: [] },
    results: { total_samples: n, completed_samples: n, scores: [] }, stats: {},
  }));
  zip.end();
  if (!out.writableFinished) await once(out, 'finish');
  if (failure) throw failure;
  return raw;
}

const PY_READ = `
import json, sys, time, zipfile, resource
t = time.perf_counter()
n = 0
with zipfile.ZipFile(sys.argv[1]) as z:
    for info in z.infolist():
        if info.filename.startswith('samples/'):
            json.loads(z.read(info))
            n += 1
print(json.dumps({"seconds": time.perf_counter() - t, "samples": n, "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
`;

export async function benchIngestInspectLarge(samples = 200_000, attachmentChars = 5800): Promise<IngestInspectLargeBench> {
  const dir = mkdtempSync(join(tmpdir(), 'standoff-bench-inspect-large-'));
  try {
    const file = join(dir, 'large.eval');
    const uncompressedBytes = await writeLargeEval(file, samples, attachmentChars);
    const fileBytes = statSync(file).size;

    // The ingest, as a user runs it, in a process of its own (its peak RSS is the ingest's).
    const child = spawnSync(process.execPath, ['--import', 'tsx', 'bench/ingest-inspect-large.ts', '--ingest', file, join(dir, 'traces')], {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    });
    if (child.status !== 0) throw new Error(`ingest failed: ${child.stderr.trim().split('\n').pop()}`);
    const ing = JSON.parse(child.stdout.trim().split('\n').pop()!) as { seconds: number; maxRssKb: number; rows: Record<string, number> };

    let pythonSeconds: number | null = null;
    let pythonPeakRssMb: number | null = null;
    const py = spawnSync('/usr/bin/python3', ['-c', PY_READ, file], { encoding: 'utf8' });
    if (py.status === 0) {
      const r = JSON.parse(py.stdout.trim()) as { seconds: number; samples: number; maxrss_kb: number };
      if (r.samples !== samples) throw new Error(`python read ${r.samples} samples, expected ${samples}`);
      pythonSeconds = Math.round(r.seconds * 100) / 100;
      pythonPeakRssMb = Math.round(r.maxrss_kb / 1024);
    }
    const result: IngestInspectLargeBench = {
      name: 'ingest-inspect-large',
      samples,
      fileBytes,
      uncompressedBytes,
      ingestSeconds: Math.round(ing.seconds * 100) / 100,
      samplesPerSecond: Math.round(samples / ing.seconds),
      ingestPeakRssMb: Math.round(ing.maxRssKb / 1024),
      pythonSeconds,
      pythonPeakRssMb,
      ratio: pythonSeconds ? Math.round((ing.seconds / pythonSeconds) * 100) / 100 : null,
      rows: ing.rows,
    };
    const mb = (b: number) => `${(b / 1e6).toFixed(0)} MB`;
    console.log(`ingest inspect, large log: ${samples.toLocaleString('en-US')} samples, ${mb(fileBytes)} on disk (${mb(uncompressedBytes)} uncompressed)`);
    console.log(`  standoff ingest inspect (read, map, validate, write Parquet): ${result.ingestSeconds} s = ${result.samplesPerSecond} samples/s; peak RSS ${result.ingestPeakRssMb} MB [archive not held in memory: ${result.ingestPeakRssMb * 1e6 < fileBytes ? 'ok' : 'MISSED'}]`);
    if (pythonSeconds !== null) {
      console.log(`  baseline, Python zipfile + json.loads of every sample: ${pythonSeconds} s, peak RSS ${pythonPeakRssMb} MB; ingest / baseline ${result.ratio}x`);
    } else console.log('  baseline skipped: /usr/bin/python3 not found');
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--ingest') {
  // Child: the ingest alone, reporting its time and this process's peak RSS.
  const { ingestInspect } = await import('../src/ingest/ingest-inspect.ts');
  const t0 = performance.now();
  const s = await ingestInspect([process.argv[3]!], { traces: process.argv[4]! });
  const seconds = (performance.now() - t0) / 1000;
  console.log(JSON.stringify({ seconds, maxRssKb: process.resourceUsage().maxRSS, rows: s.runs[0]!.tables }));
} else if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  await benchIngestInspectLarge(process.argv[2] ? Number(process.argv[2]) : undefined, process.argv[3] ? Number(process.argv[3]) : undefined);
}
