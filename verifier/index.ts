/** The verifier service (`GET /log` per episode, bearer-token isolated) and its client helper. */
export {
  VERIFIER_FAULTS,
  hashUniform,
  readSystemLog,
  serveVerifier,
  startVerifier,
  type FaultSpec,
  type ReadResult,
  type RegisterOptions,
  type Registration,
  type ServeVerifierOptions,
  type StartVerifierOptions,
  type TokenStats,
  type Verifier,
  type VerifierFault,
  type VerifierStats,
} from './server.ts';
