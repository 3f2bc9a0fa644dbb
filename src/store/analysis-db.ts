/**
 * The DuckDB settings of every statistics command (`ci`, `agreement`, `judges`, `probes`, `costs`,
 * `rank`, ... through `withStore` in src/analysis/ci.ts) and of `--input` / `--from-aggregates`
 * files: the report's (2 threads, 1 GB; src/report/sections/context.ts), plus a temp directory
 * under the OS temp directory that DuckDB spills to and that `close()` removes. Bounded memory at
 * 1e7 episodes: docs/scale.md.
 *
 * Its own module, without imports, so the CLI's error handler can name the limit without loading
 * DuckDB at start-up (tests/cli/startup.test.ts).
 */
export const ANALYSIS_DB = { threads: 2, memoryLimit: '1GB' } as const;
