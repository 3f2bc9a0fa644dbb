/**
 * Simulated OpenAI-compatible endpoints (`sim:*` models) for offline runs and tests.
 * See `server.ts` (HTTP), `profiles.ts` (models, families, suffix syntax), `behavior.ts` (replies).
 */
export {
  DEFAULT_SCENARIOS_DIR,
  serveSim,
  startSimServer,
  type ServeSimOptions,
  type SimServer,
  type SimServerOptions,
  type SimStats,
} from './server.ts';
export {
  SIM_FAMILIES,
  SIM_FAULT_KINDS,
  SIM_JUDGES,
  SIM_MODELS,
  SIM_SUBJECTS,
  SimModelError,
  isSimModel,
  parseFaultSpec,
  parseSimModel,
  simFamily,
  type JudgeParams,
  type ParsedSimModel,
  type SimFaultKind,
  type SimFaultRule,
  type SimProfile,
  type SubjectParams,
} from './profiles.ts';
export {
  buildScenarioIndex,
  canonicalJson,
  judgeTranscriptTruth,
  simReply,
  statedAction,
  type ScenarioIndex,
  type SimReply,
} from './behavior.ts';
