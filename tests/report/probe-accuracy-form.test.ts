/**
 * Accuracy against error form across subjects: the table, Spearman with its bootstrap interval
 * over subjects (checked in tests/stats/spearman.test.ts), what is said with too few subjects or a
 * bootstrap without spread, and the scatter figure.
 */
import { describe, expect, it } from 'vitest';
import { accuracyForm, accuracyFormFigure, renderAccuracyForm } from '../../src/report/probe-accuracy-form.ts';
import { spearmanBootstrap } from '../../src/stats/index.ts';

const share = (count: number, n: number) => ({ count, n, rate: n ? count / n : null });
const subj = (subject: string, c: number, n: number, a: number, e: number) => ({ subject, t: { decision_accuracy: share(c, n), errors_after_correct_reading: share(a, e) } as never });
const o = { seed: 3, resamples: 2000, level: 0.95 };

describe('accuracy against error form', () => {
  it('five subjects: Spearman and the bootstrap over subjects, as spearmanBootstrap on the rates', () => {
    const subjects = [subj('a', 81, 100, 19, 19), subj('b', 57, 100, 18, 43), subj('c', 80, 100, 17, 20), subj('d', 90, 100, 9, 10), subj('e', 60, 100, 20, 40)];
    const a = accuracyForm(subjects, o);
    expect(a.used).toBe(5);
    const expected = spearmanBootstrap([0.81, 0.57, 0.8, 0.9, 0.6], [1, 18 / 43, 0.85, 0.9, 0.5], o);
    expect(a.spearman).toEqual(expected);
    const md = renderAccuracyForm(a);
    expect(md).toContain('| b | 57.0% (57/100) | 41.9% (18/43) |');
    expect(md).toMatch(/Spearman's rank correlation over 5 subjects: 0\.90, 95% percentile bootstrap interval over subjects \[/);
    expect(accuracyFormFigure(a, ['a', 'b', 'c', 'd', 'e'], {})!.name).toBe('accuracy-form');
  });

  it('three perfectly ordered subjects: no spread, said plainly with the chance of a perfect order', () => {
    const a = accuracyForm([subj('x', 48, 60, 10, 12), subj('y', 34, 60, 11, 26), subj('z', 49, 60, 11, 11)], o);
    expect(a.spearman!.estimate).toBeCloseTo(1, 12);
    const md = renderAccuracyForm(a);
    expect(md).toContain('has no spread');
    expect(md).toContain('probability 1/6 in each direction');
    expect(md).not.toContain('[1.00, 1.00]');
    expect(JSON.stringify(accuracyFormFigure(a, ['x', 'y', 'z'], {})!.spec)).toContain('Spearman 1.00 (the bootstrap over subjects has no spread) over 3 subjects');
  });

  it('a subject without errors is left out; fewer than three usable subjects give no correlation', () => {
    const a = accuracyForm([subj('x', 60, 60, 0, 0), subj('y', 34, 60, 11, 26), subj('z', 49, 60, 11, 11)], o);
    expect([a.used, a.spearman]).toEqual([2, null]);
    expect(renderAccuracyForm(a)).toContain('needs at least 3 subjects with errors; there are 2');
    expect(accuracyFormFigure(a, ['x', 'y', 'z'], {})).toBeNull();
  });
});
