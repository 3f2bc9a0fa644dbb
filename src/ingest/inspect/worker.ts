/**
 * Worker thread of `ingest inspect` (`pool.ts`): reads the sample units it is asked for from a
 * `.eval` log by offset (inflate, CRC, JSON parse, shape check), maps, checks and stages them
 * (`processUnit`), and sends the results back in unit order. Problems travel as code and message
 * (an Error's class does not cross threads) and are rebuilt as data errors by the pool.
 */
import { parentPort } from 'node:worker_threads';
import { ZipReader } from './zip.ts';
import { readUnit, sampleUnits, type SampleUnit } from './eval-log.ts';
import { BlockBuilder, processUnit, type UnitJob, type UnitResult, type WireResult } from './unit.ts';

let open: { file: string; zip: ZipReader; units: SampleUnit[] } | null = null;

function unitsOf(job: UnitJob): { zip: ZipReader; units: SampleUnit[] } {
  if (open?.file !== job.file) {
    open?.zip.close();
    open = null;
    const zip = ZipReader.open(job.file, job.limits);
    open = { file: job.file, zip, units: sampleUnits(zip) };
  }
  if (open.units.length !== job.units) throw new Error(`${job.file}: ${open.units.length} sample units, the calling thread counted ${job.units} (did the file change?)`);
  return open;
}

const wire = (r: UnitResult): WireResult => {
  const { error, invalid, mapped: _m, staged: _s, ...rest } = r as UnitResult & { invalid?: Error; mapped?: unknown; staged?: unknown };
  const err = (e: Error & { code?: string }) => ({ code: e.code ?? 'ingest.badSample', message: e.message });
  return { ...rest, ...(error ? { error: err(error) } : {}), ...(invalid ? { invalid: err(invalid) } : {}) } as WireResult;
};

parentPort!.on('message', (job: UnitJob | { close: true }) => {
  if ('close' in job) {
    // The pool is done with this thread: release the log and the port, and the thread ends.
    open?.zip.close();
    open = null;
    parentPort!.close();
    return;
  }
  try {
    const { zip, units } = unitsOf(job);
    const out: WireResult[] = [];
    const block = new BlockBuilder();
    for (let u = job.from; u < job.to; u++) {
      const r = processUnit(readUnit(zip, job.file, units[u]!), job.ctx);
      if (!r.error && r.staged) block.add(u, r.staged);
      out.push(wire(r));
    }
    parentPort!.postMessage({ id: job.id, results: out, block: block.build() });
  } catch (err) {
    parentPort!.postMessage({ id: job.id, failed: (err as Error).stack ?? String(err) });
  }
});
