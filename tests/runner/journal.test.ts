/**
 * The journal reader streams the file in 1 MiB chunks: lines that cross chunk boundaries, lines
 * longer than a chunk, blank lines, duplicates and a torn tail must read exactly as a whole-file
 * parse would, and `readJournalUnit` must find each unit again where the scan saw it.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readJournal, readJournalUnit, scanJournal, type JournalUnit } from '../../src/runner/journal.ts';
import { StandoffError } from '../../src/errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'standoff-journal-'));
const header = { kind: 'header', version: 1, run_id: 'j', created_at: '2026-11-30T00:00:00.000Z', config_hash: 'h', total: 0, config: {} };

/** A unit whose line is about `pad` characters long (its one message holds the padding). */
function unit(id: string, pad: number): JournalUnit {
  return {
    kind: 'unit',
    episode_id: id,
    episode: { episode_id: id } as JournalUnit['episode'],
    messages: [{ content: 'é✓'.repeat(Math.floor(pad / 2)) } as JournalUnit['messages'][number]],
    scores: [],
    judgments: [],
    probe_answers: [],
    probe_decisions: [],
  };
}

describe('scanJournal', () => {
  it('reads lines across 1 MiB chunk boundaries, longer than a chunk, with blanks and duplicates, as a whole-file parse does', async () => {
    // Sizes chosen so lines straddle the 1 MiB chunk edges; one line is 2.5 MiB of 2- and 3-byte UTF-8.
    const units = [unit('a', 700_000), unit('b', 400_000), unit('c', 1_300_000), unit('d', 10), unit('a', 5), unit('e', 300_000)];
    const lines = [JSON.stringify(header), ...units.map((u) => JSON.stringify(u)), '', '   '];
    lines.splice(3, 0, '');
    const text = lines.join('\n') + '\n';
    const path = join(dir, 'chunks.jsonl');
    writeFileSync(path, text);
    const seen: { u: JournalUnit; line: { offset: number; bytes: number } }[] = [];
    const scan = await scanJournal(path, (u, line) => void seen.push({ u, line }));
    expect(seen.map((s) => s.u.episode_id)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(seen.map((s) => s.u.messages[0]!.content)).toEqual([units[0], units[1], units[2], units[3], units[5]].map((u) => u.messages[0]!.content));
    expect(scan).toMatchObject({ torn: false, duplicates: 1, unitCount: 5, goodBytes: Buffer.byteLength(text) });
    expect(scan.header).toEqual(header);
    const fh = await open(path, 'r');
    try {
      for (const s of seen) expect(await readJournalUnit(fh, s.line)).toEqual(s.u);
    } finally {
      await fh.close();
    }
    const whole = await readJournal(path);
    expect([...whole.units.keys()]).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('drops a torn last line (no newline, or not JSON) and reports where the good bytes end', async () => {
    const good = `${JSON.stringify(header)}\n${JSON.stringify(unit('a', 2_000_000))}\n`;
    for (const tail of [JSON.stringify(unit('b', 10)), '{"kind":"unit","episode_id":"b","epis', '{"kind":"unit",\n']) {
      const path = join(dir, 'torn.jsonl');
      writeFileSync(path, good + tail);
      const ids: string[] = [];
      const scan = await scanJournal(path, (u) => void ids.push(u.episode_id));
      expect(ids).toEqual(['a']);
      expect(scan).toMatchObject({ torn: true, goodBytes: Buffer.byteLength(good) });
    }
  });

  it('refuses a damaged line that is not the last, naming the line', async () => {
    const path = join(dir, 'bad.jsonl');
    writeFileSync(path, `${JSON.stringify(header)}\n{oops\n${JSON.stringify(unit('a', 10))}\n`);
    const err = await scanJournal(path, () => undefined).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StandoffError);
    expect((err as StandoffError).code).toBe('journal.corrupt');
    expect((err as StandoffError).message).toBe(`${path}: line 2 is not valid JSON (only a torn last line is tolerated)`);
  });
});
