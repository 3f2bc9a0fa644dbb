/**
 * Figures: the palette survives colour-vision deficiencies, the pairwise forest plot labels its
 * zero line, probe outcomes carry their exact intervals, and faceted figures wrap instead of
 * growing wider with every subject. Figures are rendered for real (Vega -> SVG).
 */
import { describe, it, expect } from 'vitest';
import { PALETTE } from '../../src/report/sections/context.ts';
import { MAX_FIGURE_WIDTH, groundedHeatmap } from '../../src/report/figures.ts';
import { OUTCOME_COLOURS, probeOutcomes } from '../../src/report/figure-probes.ts';
import { pairedForest } from '../../src/report/core-figures.ts';
import { O1_PAIRWISE_VIEW } from '../../src/report/suites/o1-pairwise.ts';
import { renderFigure } from '../../src/report/render-figure.ts';
import type { GroundedSection } from '../../src/report/sections/grounded.ts';
import type { PairwiseSection } from '../../src/report/sections/pairwise.ts';
import type { ProbesSection } from '../../src/report/sections/probes.ts';

// Colour-vision deficiency simulation: Machado, Oliveira & Fernandes (2009), "A physiologically-based
// model for simulation of color vision deficiency", IEEE TVCG 15(6), matrices for severity 1.0,
// applied to linear sRGB; distances are CIE76 ΔE in CIELAB (D65).
const CVD: Record<string, number[][]> = {
  normal: [
    [1, 0, 0],
    [0, 1, 0],
    [0, 0, 1],
  ],
  protanopia: [
    [0.152286, 1.052583, -0.204868],
    [0.114503, 0.786281, 0.099216],
    [-0.003882, -0.048116, 1.051998],
  ],
  deuteranopia: [
    [0.367322, 0.860646, -0.227968],
    [0.280085, 0.672501, 0.047413],
    [-0.01182, 0.04294, 0.968881],
  ],
  tritanopia: [
    [1.255528, -0.076749, -0.178779],
    [-0.078411, 0.930809, 0.147602],
    [0.004733, 0.691367, 0.3039],
  ],
};

function lab(hex: string, m: number[][]): number[] {
  const lin = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  const [r, g, b] = m.map((row) => Math.min(1, Math.max(0, row[0] * lin[0] + row[1] * lin[1] + row[2] * lin[2])));
  const X = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
  const Y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  const Z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
  const f = (t: number) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116);
  return [116 * f(Y) - 16, 500 * (f(X) - f(Y)), 200 * (f(Y) - f(Z))];
}

/** The least distinguishable pair of colours under any of the simulated visions. */
function worstPair(colours: string[]): { deltaE: number; vision: string; pair: string[] } {
  let worst = { deltaE: Infinity, vision: '', pair: [] as string[] };
  for (const [vision, m] of Object.entries(CVD)) {
    for (let i = 0; i < colours.length; i++) {
      for (let j = i + 1; j < colours.length; j++) {
        const deltaE = Math.hypot(...lab(colours[i], m).map((v, k) => v - lab(colours[j], m)[k]));
        if (deltaE < worst.deltaE) worst = { deltaE, vision, pair: [colours[i], colours[j]] };
      }
    }
  }
  return worst;
}

describe('colour-blind-safe palette', () => {
  it('the check catches red vs green: the old Tableau pair is indistinguishable with deuteranopia', () => {
    const w = worstPair(['#59A14F', '#E15759']);
    expect(w.vision).toBe('deuteranopia');
    expect(w.deltaE).toBeLessThan(2);
  });

  it('subject colours (first six) and probe outcome colours stay apart under every simulated vision', () => {
    expect(worstPair(PALETTE.slice(0, 6)).deltaE).toBeGreaterThan(15);
    expect(worstPair(OUTCOME_COLOURS).deltaE).toBeGreaterThan(15);
  });
});

const share = (count: number, n: number, lower: number, upper: number) => {
  const interval = { lower, upper, sampling: 'independent' };
  return { count, n, rate: count / n, interval, exact: interval, cluster: null };
};

describe('forest plot', () => {
  it('labels the zero line', async () => {
    const comparison = { suite: 's', scorer: 'policy_action', metric: 'policy_action', a: 'A', b: 'B', difference: 0.1, lower: -0.05, upper: 0.25, p_value: 0.1, p_holm: 0.2, p_adjusted: 0.2, pairs: 90 };
    const fig = pairedForest({ comparisons: [comparison], alpha: 0.05, adjust: 'holm' } as unknown as PairwiseSection, 0.95, O1_PAIRWISE_VIEW, 'pairwise')!;
    const svg = (await renderFigure(fig.spec)).svg;
    expect(svg).toContain('0 = no difference');
    // The dashed rule at x = 0 sits exactly under the labelled tick.
    expect(svg).toMatch(/stroke-dasharray="4,3"/);
  });
});

describe('probe outcomes', () => {
  it('show each share with its interval', async () => {
    const cells = {
      facts_right_action_right: share(61, 90, 0.5703, 0.7706),
      facts_right_action_wrong: share(12, 90, 0.0708, 0.2214),
      facts_wrong_action_right: share(15, 90, 0.0966, 0.2599),
      facts_wrong_action_wrong: share(2, 90, 0.0027, 0.078),
    };
    const fig = probeOutcomes({ level: 0.95, subjects: [{ subject: 'sim:x', cells }] } as unknown as ProbesSection, ['sim:x']);
    const values = (fig.spec.data as { values: { outcome: string; lower: number; upper: number; share: number }[] }).values;
    expect(values.map((v) => [v.lower, v.share, v.upper])).toEqual([
      [57.03, 67.7778, 77.06],
      [7.08, 13.3333, 22.14],
      [9.66, 16.6667, 25.99],
      [0.27, 2.2222, 7.8],
    ]);
    const svg = (await renderFigure(fig.spec)).svg;
    expect(svg).toContain('lines: 95% interval');
    expect(svg).toContain('67.8% (61/90)');
  });
});

describe('wide facets wrap', () => {
  it('a subject-faceted figure with 12 subjects wraps into rows and stays within the width budget', async () => {
    const subjects = Array.from({ length: 12 }, (_, i) => `model-${String(i).padStart(2, '0')}`);
    const table = { gathered_correct: 40, gathered_incorrect: 5, not_gathered_correct: 10, not_gathered_incorrect: 5 };
    const fig = groundedHeatmap({ subjects: subjects.map((subject) => ({ subject, table })), total_correct_without_evidence: 0 } as unknown as GroundedSection, subjects);
    expect(fig.spec.columns).toBeLessThan(subjects.length);
    const svg = (await renderFigure(fig.spec)).svg;
    const width = Number(/<svg[^>]* width="([\d.]+)"/.exec(svg)![1]);
    expect(width).toBeLessThanOrEqual(MAX_FIGURE_WIDTH * 1.3); // + legend and padding
    for (const s of subjects) expect(svg).toContain(s);
  });
});
