/**
 * Hash-sealed states (issue 24, point 2; the paper's "frozen in a hash-sealed manifest", §3): the
 * pure part. A state manifest holds, for every scenario or generated state, the SHA-256 of its
 * canonical content (the validated scenario as JSON with object keys sorted and no whitespace, so
 * reformatting a file does not change it but any edit of its text does) and a root hash over them
 * (SHA-256 of the lines `<scenario_id> <sha256>\n` in scenario_id order). Loading a directory is
 * `loadStateManifest` in runner/manifest.ts.
 */
import { createHash } from 'node:crypto';
import type { Scenario } from '../schema/scenario.ts';

export interface StateManifest {
  algorithm: 'sha256';
  /** How a state's content is made canonical before hashing. */
  canonical: 'json-sorted-keys/v1';
  /** SHA-256 over the `<scenario_id> <sha256>\n` lines in scenario_id order. */
  root: string;
  states: Record<string, string>;
}

export interface ManifestDiff {
  /** In both, with different content. */
  changed: string[];
  /** In the recorded manifest, not on disk. */
  missing: string[];
  /** On disk, not in the recorded manifest. */
  added: string[];
}

/** JSON with object keys sorted at every level and no whitespace. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v as object).filter((k) => (v as Record<string, unknown>)[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** The manifest of these states. */
export function buildStateManifest(scenarios: readonly Scenario[]): StateManifest {
  const states: Record<string, string> = {};
  for (const s of [...scenarios].sort((a, b) => (a.scenario_id < b.scenario_id ? -1 : a.scenario_id > b.scenario_id ? 1 : 0))) {
    states[s.scenario_id] = sha256(canonicalJson(s));
  }
  const root = sha256(Object.entries(states).map(([id, h]) => `${id} ${h}\n`).join(''));
  return { algorithm: 'sha256', canonical: 'json-sorted-keys/v1', root, states };
}

/**
 * Where `current` differs from `recorded`. With `only`, states of `current` outside `recorded`
 * are not reported as added (a run may use a subset of a directory).
 */
export function diffStateManifests(recorded: StateManifest, current: StateManifest, opts: { subset?: boolean } = {}): ManifestDiff {
  const changed: string[] = [];
  const missing: string[] = [];
  for (const [id, h] of Object.entries(recorded.states)) {
    const now = current.states[id];
    if (now === undefined) missing.push(id);
    else if (now !== h) changed.push(id);
  }
  const added = opts.subset ? [] : Object.keys(current.states).filter((id) => !(id in recorded.states));
  return { changed, missing, added };
}

/** One line naming what differs, or null when nothing does. */
export function describeManifestDiff(d: ManifestDiff): string | null {
  const part = (label: string, ids: string[]) => (ids.length ? `${ids.length} ${label} (${ids.slice(0, 5).join(', ')}${ids.length > 5 ? ', ...' : ''})` : '');
  const parts = [part('changed', d.changed), part('missing', d.missing), part('added', d.added)].filter(Boolean);
  return parts.length ? parts.join('; ') : null;
}
