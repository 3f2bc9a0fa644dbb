/**
 * Accuracy against error form across subjects (the abstract of "Reading Right, Acting Wrong": "the
 * more accurate a system, the more of its errors take this form"; §5.1). Per subject: decision
 * accuracy and the share of its decision errors made after correct reading; with three or more
 * subjects, Spearman's rank correlation between the two with a percentile bootstrap interval over
 * subjects (`spearmanBootstrap`). Built from the probe tables' typed values: no extra query.
 */
import { spearmanBootstrap, type SpearmanBootstrapResult } from '../stats/index.ts';
import type { FigureSpec } from './figures.ts';
import { baseConfig, subjectScale } from './figures.ts';
import { cell, fixed, fmtCount, rateCell, table } from './markdown.ts';
import type { ProbeGroupTable } from '../analysis/probe-tables.ts';

export const MIN_SUBJECTS_FOR_RELATION = 3;

export interface AccuracyFormRow {
  subject: string;
  accuracy: number | null;
  correct: number;
  answers: number;
  /** Share of decision errors made with every fact right (null when the subject made no error). */
  after_correct_reading: number | null;
  errors_after: number;
  errors: number;
}

export interface AccuracyForm {
  rows: AccuracyFormRow[];
  /** Subjects with both numbers defined (the correlation's units). */
  used: number;
  /** Null with fewer than three usable subjects. */
  spearman: SpearmanBootstrapResult | null;
}

export function accuracyForm(subjects: { subject: string; t: Pick<ProbeGroupTable, 'decision_accuracy' | 'errors_after_correct_reading'> }[], o: { seed: number; resamples: number; level: number }): AccuracyForm {
  const rows = subjects.map(({ subject, t }) => ({
    subject,
    accuracy: t.decision_accuracy.rate,
    correct: t.decision_accuracy.count,
    answers: t.decision_accuracy.n,
    after_correct_reading: t.errors_after_correct_reading.rate,
    errors_after: t.errors_after_correct_reading.count,
    errors: t.errors_after_correct_reading.n,
  }));
  const ok = rows.filter((r) => r.accuracy !== null && r.after_correct_reading !== null);
  const spearman = ok.length >= MIN_SUBJECTS_FOR_RELATION ? spearmanBootstrap(ok.map((r) => r.accuracy!), ok.map((r) => r.after_correct_reading!), o) : null;
  return { rows, used: ok.length, spearman };
}

const num = (x: number | null) => (x === null ? '—' : fixed(x, 2).replace('-', '−'));

export function renderAccuracyForm(a: AccuracyForm): string {
  const out = ['### Accuracy against error form across subjects\n'];
  out.push(
    `Is a more accurate subject one whose errors more often follow correct reading (Li, Krishnan & Padman, abstract and §5.1)? Per subject, decision accuracy against the share of its decision errors made with every fact right.\n`,
  );
  out.push(
    table(
      ['Subject model', 'Decision accuracy', 'Errors after correct reading'],
      a.rows.map((r) => [cell(r.subject), rateCell(r.correct, r.answers), rateCell(r.errors_after, r.errors)]),
      ['l', 'r', 'r'],
    ),
  );
  const s = a.spearman;
  if (!s) out.push(`A rank correlation needs at least ${MIN_SUBJECTS_FOR_RELATION} subjects with errors; there ${a.used === 1 ? 'is' : 'are'} ${fmtCount(a.used)}.\n`);
  else if (s.lower !== null && s.lower === s.upper) {
    const fact = Array.from({ length: a.used }, (_, i) => i + 1).reduce((x, y) => x * y, 1);
    out.push(
      `Spearman's rank correlation over ${fmtCount(a.used)} subjects: ${num(s.estimate)}. The bootstrap over subjects has no spread (every resample with two distinct subjects orders them the same way), so it gives no interval worth showing` +
        (Math.abs(s.estimate ?? 0) === 1 ? `; with ${fmtCount(a.used)} subjects a perfect rank order arises by chance with probability ${a.used <= 8 ? `1/${fmtCount(fact)}` : `below 1/40,320`} in each direction (all orders equally likely).` : '.') +
        ` The correlation describes these subjects only.\n`,
    );
  } else {
    out.push(
      `Spearman's rank correlation over ${fmtCount(a.used)} subjects: ${num(s.estimate)}, ${Math.round(s.level * 100)}% percentile bootstrap interval over subjects [${num(s.lower)}, ${num(s.upper)}] ` +
        `(${fmtCount(s.resamples)} resamples, seed ${s.seed}${s.undefinedResamples ? `; ${fmtCount(s.undefinedResamples)} resamples with a constant variable left out` : ''}). ` +
        `With ${a.used < 10 ? 'this few subjects the interval is wide and coarse, and the correlation describes these subjects only' : 'subjects as the units, the interval describes variation over subjects like these'}.\n`,
    );
  }
  return out.join('\n');
}

export function accuracyFormFigure(a: AccuracyForm | null | undefined, subjects: string[], colours: Record<string, string>): FigureSpec | null {
  if (!a || a.used < MIN_SUBJECTS_FOR_RELATION) return null;
  const values = a.rows
    .filter((r) => r.accuracy !== null && r.after_correct_reading !== null)
    .map((r) => ({ subject: r.subject, accuracy: Math.round(r.accuracy! * 1e4) / 100, after: Math.round(r.after_correct_reading! * 1e4) / 100, errors: r.errors }));
  const shown = subjects.filter((s) => values.some((v) => v.subject === s));
  const sp = a.spearman!;
  return {
    name: 'accuracy-form',
    caption: 'Decision accuracy against the share of decision errors made after correct reading, one point per subject.',
    spec: {
      $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
      title: { text: 'More accurate, more errors after correct reading?', subtitle: `Spearman ${num(sp.estimate)} ${sp.lower !== null && sp.lower === sp.upper ? '(the bootstrap over subjects has no spread)' : `[${num(sp.lower)}, ${num(sp.upper)}]`} over ${a.used} subjects` },
      width: 320,
      height: 280,
      data: { values },
      layer: [
        {
          mark: { type: 'circle', size: 120, opacity: 0.9 },
          encoding: {
            x: { field: 'accuracy', type: 'quantitative', title: 'Decision accuracy (%)', scale: { domain: [0, 100], nice: false } },
            y: { field: 'after', type: 'quantitative', title: 'Errors after correct reading (% of errors)', scale: { domain: [0, 100], nice: false } },
            color: { field: 'subject', type: 'nominal', title: 'Subject model', scale: subjectScale(shown, colours) },
            tooltip: [{ field: 'subject' }, { field: 'accuracy' }, { field: 'after' }, { field: 'errors' }],
          },
        },
        { mark: { type: 'text', dy: -12, fontSize: 10 }, encoding: { x: { field: 'accuracy', type: 'quantitative' }, y: { field: 'after', type: 'quantitative' }, text: { field: 'subject' } } },
      ],
      config: baseConfig(),
    },
  };
}
