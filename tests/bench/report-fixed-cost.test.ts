import { describe, expect, it } from 'vitest';
import { fixedCostLine } from '../../bench/report-fixed-cost.ts';

// The bench's fixed-cost line: what a build within 5x the floor leaves after the demo build's cost.
describe('fixedCostLine', () => {
  const large = { floorMs: 700, floorCpuMs: 1400, floorLimit: 5 };
  it('says the target is below the fixed cost when the demo build alone exceeds 5x the floor', () => {
    const line = fixedCostLine({ demo: { episodes: 270, buildMs: 2500, importMs: 900, cpuMs: 4000 }, large });
    expect(line).toContain('3.4 s wall');
    expect(line).toContain('0.1 s left for the work that grows with the data (wall)');
    expect(line).toContain('3.0 s left for the work that grows with the data (CPU)');
    const over = fixedCostLine({ demo: { episodes: 270, buildMs: 3000, importMs: 900, cpuMs: 8000 }, large });
    expect(over).toContain('the target is 0.4 s below the fixed cost alone (wall)');
    expect(over).toContain('the target is 1.0 s below the fixed cost alone (CPU)');
  });
});
