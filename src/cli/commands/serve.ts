import type { Command } from 'commander';
import { action, parseIntArg, withExamples } from '../program.ts';

export function registerServe(program: Command): void {
  const verifier = withExamples(program.command('verifier').description('the per-episode system-log service (loopback only)'), 'standoff verifier serve --scenarios scenarios');
  const vs = verifier
    .command('serve')
    .description('serve GET /log on 127.0.0.1; with --scenarios, registers each scenario\'s log and prints its token')
    .option('--port <n>', 'port (default: an ephemeral one)', parseIntArg('--port'))
    .option('--scenarios <dir>', 'register the logs of the scenarios in DIR')
    .action(
      action(async (o: { port?: number; scenarios?: string }) => {
        const { serveVerifier } = await import('../../../verifier/index.ts');
        const { loadScenarios } = await import('../../runner/scenarios.ts');
        const logs = o.scenarios ? Object.fromEntries(loadScenarios(o.scenarios).map((s) => [s.scenario_id, s.log])) : {};
        await serveVerifier({ port: o.port, logs });
      }),
    );
  withExamples(vs, 'standoff verifier serve --scenarios scenarios');

  const sim = withExamples(program.command('sim').description('simulated OpenAI-compatible endpoints (scripted subjects and judges) for offline runs'), 'standoff sim serve --port 8787');
  const ss = sim
    .command('serve')
    .description('serve /v1/chat/completions on 127.0.0.1 playing sim:hasty, sim:careful, sim:thorough and sim judges')
    .option('--port <n>', 'port (default: an ephemeral one)', parseIntArg('--port'))
    .option('--seed <n>', 'seed of the scripted behaviour', parseIntArg('--seed'), 0)
    .option('--latency <ms>', 'latency of each reply (the reply is computed within it)', parseIntArg('--latency'), 0)
    .action(
      action(async (o: { port?: number; seed: number; latency: number }) => {
        const { serveSim } = await import('../../runner/sim/index.ts');
        await serveSim({ port: o.port, seed: o.seed, latencyMs: o.latency });
      }),
    );
  withExamples(ss, 'standoff sim serve --port 8787 --seed 1', 'standoff sim serve --latency 100');
}
