/**
 * Notebooks render offline and sandboxed (issue 13):
 * - `sql` blocks pass `standoff sql`'s query gate: a plain `COPY ... TO '<store>/...'` used to
 *   rewrite committed episodes with the notebook exiting 0;
 * - Vega's default loader read any file or URL: `data.url: "/etc/passwd"` rendered the file into an
 *   SVG and an `http://127.0.0.1:...` URL made a request. Now any url (data, image marks) is
 *   refused before rendering and the View's loader refuses every load; a real HTTP server on
 *   127.0.0.1 counts the requests it gets (none).
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { writeRun } from '../../src/store/write-run.ts';
import { runNotebook } from '../../src/notebook/notebook.ts';
import { renderFigure } from '../../src/report/render-figure.ts';
import { sampleBundle, hashTree } from '../helpers/fixtures.ts';

let root: string;
let store: string;
let server: Server;
let url: string;
let requests = 0;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'standoff-nb-sandbox-'));
  store = join(root, 'traces');
  await writeRun(store, sampleBundle('r1'));
  server = createServer((_req, res) => {
    requests++;
    res.setHeader('content-type', 'text/csv');
    res.end('a,b\n1,2\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => server?.close());

const write = (name: string, text: string) => {
  const p = join(root, name);
  writeFileSync(p, text);
  return p;
};

describe('notebook sql blocks pass the query gate', () => {
  for (const [name, sql] of [
    ['copy', (part: string) => `COPY (SELECT * REPLACE ('sim:PWNED' AS subject_model) FROM episodes) TO '${part}' (FORMAT parquet)`],
    ['explain-analyze', (part: string) => `EXPLAIN ANALYZE COPY (SELECT * FROM episodes) TO '${part}' (FORMAT parquet)`],
    ['logging', () => `SELECT * FROM enable_logging(storage = 'file', storage_path = '${join(store, 'logs')}')`],
  ] as const) {
    it(`${name}: refused (notebook.sqlError), the store unchanged, nothing written`, async () => {
      const before = hashTree(store);
      const part = join(store, 'episodes', 'run_id=r1', 'data.parquet');
      const p = write(`${name}.md`, `# T\n\n\`\`\`sql\n${sql(part)}\n\`\`\`\n`);
      const out = join(root, `out-${name}`);
      const e = await runNotebook(p, { traces: store, out }).catch((x) => x);
      expect(e.code).toBe('notebook.sqlError');
      expect(e.message).toMatch(/:3: sql block failed: sql refused: statement 1/);
      expect(hashTree(store)).toBe(before);
      expect(readdirSync(out)).toEqual([]);
    });
  }
});

describe('figures load nothing: no file, no URL', () => {
  const values = [{ a: 1, b: 2 }];
  it('data.url naming a file or a URL is refused before rendering, and no request is made', async () => {
    for (const u of ['/etc/passwd', 'file:///etc/passwd', `${url}/data.csv`, '//127.0.0.1/x.csv']) {
      const spec = { data: { url: u, format: { type: 'csv' } }, mark: 'point', encoding: { x: { field: 'a', type: 'quantitative' } } };
      await expect(renderFigure(spec), u).rejects.toMatchObject({ code: 'report.externalData', kind: 'data' });
    }
    expect(requests).toBe(0);
  });
  it('an image mark with a url and a link channel are refused; no request', async () => {
    await expect(renderFigure({ data: { values }, mark: { type: 'image', width: 10, height: 10 }, encoding: { x: { field: 'a', type: 'quantitative' }, url: { value: `${url}/i.png` } } })).rejects.toMatchObject({ code: 'report.externalData' });
    await expect(renderFigure({ data: { values }, mark: 'point', encoding: { x: { field: 'a', type: 'quantitative' }, href: { value: `${url}/x` } } })).rejects.toMatchObject({ code: 'report.externalData' });
    expect(requests).toBe(0);
  });
  it('inline values render, also when a data field is called url', async () => {
    const r = await renderFigure({ data: { values: [{ url: `${url}/x`, a: 1 }] }, mark: 'point', encoding: { x: { field: 'a', type: 'quantitative' } } });
    expect(r.svg).toMatch(/^<svg/);
    expect(requests).toBe(0);
  });
  it('a notebook vega-lite block with data.url fails with the block position (notebook.externalData); nothing written', async () => {
    const p = write('vl-url.md', `# T\n\n\`\`\`vega-lite\n${JSON.stringify({ data: { url: '/etc/passwd', format: { type: 'csv' } }, mark: 'point' })}\n\`\`\`\n`);
    const out = join(root, 'out-vl');
    const e = await runNotebook(p, { traces: store, out }).catch((x) => x);
    expect(e).toMatchObject({ code: 'notebook.externalData', kind: 'data' });
    expect(e.message).toMatch(/vl-url\.md:3: figure data must be inline: the spec names data\.url = "\/etc\/passwd"/);
    expect(readdirSync(out)).toEqual([]);
    expect(requests).toBe(0);
  });
});
