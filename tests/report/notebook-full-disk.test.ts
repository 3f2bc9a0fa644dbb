/**
 * Issue 22 (LOW): notebook output on a full disk crashed with ENOSPC (exit 1). Writes go to a
 * temp directory and fail as `notebook.unwritable` (exit 4), one line naming the output file, and
 * nothing appears in the output directory. The disk is made "full" with a file-size limit
 * (`ulimit -f`, SIGXFSZ ignored), which fails the figure's write with EFBIG; ENOSPC takes the
 * same path and adds "(the disk is full)" (re-run by hand on a 12 KiB tmpfs, see the commit).
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeRun } from '../../src/store/write-run.ts';
import { hashTree, sampleBundle } from '../helpers/fixtures.ts';
import { ROOT } from '../helpers/cli.ts';

let dir: string;
let store: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-nb-full-'));
  store = join(dir, 'traces');
  await writeRun(store, sampleBundle('a', 4));
});

const NOTEBOOK = [
  '# full disk',
  '',
  '```sql',
  'SELECT subject_model, count(*) AS n FROM episodes GROUP BY 1 ORDER BY 1',
  '```',
  '',
  '```vega-lite',
  '{"mark": "bar", "encoding": {"x": {"field": "subject_model", "type": "nominal"}, "y": {"field": "n", "type": "quantitative"}}}',
  '```',
  '',
].join('\n');

describe('notebook output that cannot be written', () => {
  it('a write that fails (EFBIG under ulimit -f): one line naming the file, exit 4, no output, store unchanged', () => {
    const nb = join(dir, 'nb.md');
    writeFileSync(nb, NOTEBOOK);
    const out = join(dir, 'out');
    mkdirSync(out);
    const before = hashTree(store);
    // 8 blocks of 512 bytes: the figure's PNG does not fit.
    const cmd = `trap '' XFSZ; ulimit -f 8; exec "${process.execPath}" "${join(ROOT, 'bin', 'standoff.js')}" notebook run "${nb}" --traces "${store}" --out "${out}"`;
    const r = spawnSync('sh', ['-c', cmd], { cwd: ROOT, encoding: 'utf8', timeout: 120_000, env: { ...process.env, NO_COLOR: '1' } });
    expect(r.status, r.stderr).toBe(4);
    const errors = r.stderr.trim().split('\n').filter((l) => l.startsWith('standoff:'));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(new RegExp(`^standoff: cannot write notebook output ${out}/nb-1\\.(png|svg|vl\\.json): EFBIG: .*; nothing was written$`));
    expect(readdirSync(out)).toEqual([]);
    expect(hashTree(store)).toBe(before);
  }, 150_000);
});
