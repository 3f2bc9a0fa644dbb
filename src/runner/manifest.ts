/**
 * Hash-sealed states (issue 24, point 2; the paper's "frozen in a hash-sealed manifest", §3).
 *
 * A state manifest holds, for every scenario or generated state, the SHA-256 of its canonical
 * content (the validated scenario as JSON with object keys sorted and no whitespace, so
 * reformatting a file does not change it but any edit of its text does) and a root hash over them
 * (SHA-256 of the lines `<scenario_id> <sha256>\n` in scenario_id order). Every run records its
 * manifest in `runs.config.state_manifest`; `config_hash` covers the root; `--resume` refuses a
 * changed state; `standoff validate --states DIR` compares a directory with a run's manifest;
 * `standoff manifest DIR` prints one.
 *
 * The pure part (build, diff) is src/store/state-manifest.ts; `loadStateManifest` reads a directory.
 */
import { loadScenarios } from './scenarios.ts';
import { buildStateManifest, type StateManifest } from '../store/state-manifest.ts';

export { buildStateManifest, canonicalJson, describeManifestDiff, diffStateManifests, type ManifestDiff, type StateManifest } from '../store/state-manifest.ts';

/** The manifest of a scenario/state directory (every `*.json`, validated as a run loads it). */
export function loadStateManifest(dir: string): StateManifest {
  return buildStateManifest(loadScenarios(dir));
}
