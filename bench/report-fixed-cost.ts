/** The fields of a report bench result (bench/report.ts) that the fixed-cost line reads. */
export interface FixedCostInput {
  demo: { episodes: number; buildMs: number; importMs: number; cpuMs: number };
  large: { floorMs: number; floorCpuMs: number; floorLimit: number };
}

/**
 * The report's fixed cost beside the floor: the demo build (270 episodes) in the same run costs
 * what any build pays whatever the data (figures, HTML, the statistics' set-up), so a build within
 * `floorLimit` x the floor has `floorLimit x floor - demo` left for the work that grows with the
 * data. When that is negative the target is below the report's own fixed cost (wall and CPU).
 */
export function fixedCostLine(r: FixedCostInput): string {
  const demoWall = r.demo.buildMs + r.demo.importMs;
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const left = (budget: number, fixed: number) => (budget - fixed >= 0 ? `${s(budget - fixed)} left for the work that grows with the data` : `the target is ${s(fixed - budget)} below the fixed cost alone`);
  return (
    `  fixed cost: the ${r.demo.episodes}-episode demo build in this run took ${s(demoWall)} wall (with module load), ${s(r.demo.cpuMs)} CPU: ` +
    `${(demoWall / r.large.floorMs).toFixed(1)}x / ${(r.demo.cpuMs / r.large.floorCpuMs).toFixed(1)}x the floor; within ${r.large.floorLimit}x: ` +
    `${left(r.large.floorLimit * r.large.floorMs, demoWall)} (wall), ${left(r.large.floorLimit * r.large.floorCpuMs, r.demo.cpuMs)} (CPU)`
  );
}
