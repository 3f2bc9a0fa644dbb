/**
 * A per-sample results CSV as a researcher has it (issue 11): 4 models x 150 items x 2 epochs,
 * `model,sample_id,epoch,correct,quality,judge_a,judge_b,judge_c`, where `correct` is 0/1,
 * each judge grades 1-5, a few judge cells are empty (the judge did not answer), and `quality` is
 * the median of the judges who answered (rounded half up). Seeded: the same seed gives the same
 * bytes. The rows are returned too, so tests compute expected figures from them, not from the code
 * under test.
 */
import { writeFileSync } from 'node:fs';

export const MODELS = ['acme-large', 'acme-small', 'zeta-7b', 'zeta-70b'] as const;
export const JUDGES = ['judge_a', 'judge_b', 'judge_c'] as const;

export interface NaturalRow {
  model: string;
  sample_id: string;
  epoch: number;
  correct: 0 | 1;
  quality: number;
  judges: (number | null)[];
}

/** mulberry32: a small seeded generator (uniform in [0, 1)). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function naturalRows(seed = 11, items = 150, epochs = 2): NaturalRow[] {
  const r = rng(seed);
  const skill: Record<string, number> = { 'acme-large': 0.8, 'acme-small': 0.55, 'zeta-7b': 0.4, 'zeta-70b': 0.7 };
  const rows: NaturalRow[] = [];
  for (const model of MODELS) {
    for (let i = 0; i < items; i++) {
      const difficulty = ((i * 37) % 100) / 100 - 0.5;
      for (let epoch = 1; epoch <= epochs; epoch++) {
        const p = Math.min(0.97, Math.max(0.03, skill[model]! - 0.4 * difficulty));
        const correct = r() < p ? 1 : 0;
        const base = correct ? 3.5 + r() * 1.5 : 1 + r() * 2.5;
        const judges = JUDGES.map(() => (r() < 0.03 ? null : Math.min(5, Math.max(1, Math.round(base + (r() - 0.5) * 2)))));
        const present = judges.filter((j): j is number => j !== null).sort((a, b) => a - b);
        const m = present.length === 0 ? Math.round(base) : present.length % 2 ? present[(present.length - 1) / 2]! : (present[present.length / 2 - 1]! + present[present.length / 2]!) / 2;
        rows.push({ model, sample_id: `q${String(i).padStart(3, '0')}`, epoch, correct, quality: Math.floor(m + 0.5), judges });
      }
    }
  }
  return rows;
}

export const NATURAL_HEADER = ['model', 'sample_id', 'epoch', 'correct', 'quality', ...JUDGES];

export function naturalCsv(rows: NaturalRow[]): string {
  const lines = [NATURAL_HEADER.join(',')];
  for (const x of rows) lines.push([x.model, x.sample_id, x.epoch, x.correct, x.quality, ...x.judges.map((j) => (j === null ? '' : String(j)))].join(','));
  return lines.join('\n') + '\n';
}

export function writeNaturalCsv(file: string, seed = 11): NaturalRow[] {
  const rows = naturalRows(seed);
  writeFileSync(file, naturalCsv(rows));
  return rows;
}

/**
 * Blanks the `correct` cell of every 97th data row (0-based row index % 97 == 0): the file for the
 * `--missing` tests (tests/oracle/gen_input_shapes.py applies the same rule).
 */
export function withMissingCorrect(csv: string): string {
  const lines = csv.split('\n');
  return lines
    .map((line, k) => {
      if (k === 0 || line === '' || (k - 1) % 97 !== 0) return line;
      const cells = line.split(',');
      cells[3] = '';
      return cells.join(',');
    })
    .join('\n');
}

// `npx tsx tests/helpers/natural-csv.ts OUT.csv` writes the file (for tests/oracle/gen_input_shapes.py).
if (process.argv[1]?.endsWith('natural-csv.ts') && process.argv[2]) writeNaturalCsv(process.argv[2]);
