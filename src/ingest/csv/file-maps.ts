/**
 * What the user said, for a CSV ingest: the map of each file (one map for all, a manifest, or one
 * map per file) with the flags applied. Two maps for one file, a manifest naming a file not given,
 * `--wide` with a map, or a flag that contradicts a map are usage errors (exit 2); a map that is
 * not valid JSON or breaks the mapping schema is a data problem naming the map file.
 */
import { readFile } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import type { z } from 'zod';
import { usageError } from '../../errors.ts';
import type { CsvProblems } from '../../store/read-csv.ts';
import { applyFlags, checkMappingColumns, manifestSchema, mappingSchema, type Mapping, type MappingFlags, type MappingInput } from './mapping.ts';

/** A manifest as written in a JSON file. */
export type ManifestInput = z.input<typeof manifestSchema>;

/** Reads and validates a map file or object: a mapping, or a manifest. Problems go to `problems`. */
export async function loadMap(
  map: string | MappingInput | ManifestInput,
  problems: CsvProblems,
): Promise<{ name: string; mapping?: Mapping; manifest?: Record<string, Mapping> } | null> {
  let data: unknown = map;
  let name = 'map';
  if (typeof map === 'string') {
    name = map;
    let text: string;
    try {
      text = await readFile(map, 'utf8');
    } catch (e) {
      throw usageError('ingest.noMap', `cannot read map file ${map}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    try {
      data = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    } catch (e) {
      problems.add({ file: name, line: 0, field: null, code: 'badMap', message: `not valid JSON: ${(e as Error).message}` });
      return null;
    }
  }
  const isManifest = typeof data === 'object' && data !== null && 'files' in data && !('table' in data);
  const schema = isManifest ? manifestSchema : mappingSchema;
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      problems.add({ file: name, line: 0, field: null, code: 'badMap', message: `${issue.path.join('.') || '(top level)'}: ${issue.message.toLowerCase()}` });
    }
    return null;
  }
  const check = (m: Mapping, prefix: string) => {
    const list = checkMappingColumns(m);
    for (const p of list) problems.add({ file: name, line: 0, field: null, code: p.startsWith('columns.') ? 'unknownColumn' : 'badMap', message: `${prefix}${p}` });
    return list.length === 0;
  };
  if (isManifest) {
    const files = (parsed.data as z.infer<typeof manifestSchema>).files;
    let ok = true;
    for (const [f, m] of Object.entries(files)) ok = check(m, `files.${f}.`) && ok;
    return ok ? { name, manifest: files } : null;
  }
  return check(parsed.data as Mapping, '') ? { name, mapping: parsed.data as Mapping } : null;
}

/** The key of `file` in a per-file map table: as given, else its base name. */
export function mapKeyOf(file: string, keys: Iterable<string>): string | undefined {
  const list = [...keys];
  return list.find((k) => k === file) ?? list.find((k) => basename(k) === basename(file) && resolve(k) === resolve(file)) ?? list.find((k) => k === basename(file));
}

/** Each file's map (null: detect it from the header) and the name of the map file it came from. */
export interface FileMaps {
  mapOf: (Mapping | null)[];
  mapName: (string | null)[];
}

/** `--map MAP.json` for every file, or a manifest: the files it names get their map. */
async function sharedMap(files: string[], map: NonNullable<FileMapOptions['map']>, out: FileMaps, problems: CsvProblems): Promise<boolean> {
  const loaded = await loadMap(map, problems);
  if (!loaded) return false;
  if (loaded.mapping) files.forEach((_, i) => ((out.mapOf[i] = structuredClone(loaded.mapping!)), (out.mapName[i] = loaded.name)));
  if (loaded.manifest) {
    const keys = Object.keys(loaded.manifest);
    for (const k of keys) {
      if (!files.some((f) => mapKeyOf(f, [k]) === k)) throw usageError('ingest.badManifest', `${loaded.name}: files.${k} is not one of the CSV files given (${files.join(', ')})`);
    }
    files.forEach((f, i) => {
      const k = mapKeyOf(f, keys);
      if (k !== undefined) {
        out.mapOf[i] = structuredClone(loaded.manifest![k]!);
        out.mapName[i] = loaded.name;
      }
    });
  }
  return true;
}

/** `--map FILE=MAP.json`: one file's map (a file with two maps is refused). */
async function perFileMaps(files: string[], maps: Record<string, string | MappingInput>, out: FileMaps, problems: CsvProblems): Promise<void> {
  for (const [key, m] of Object.entries(maps)) {
    const i = files.findIndex((f) => mapKeyOf(f, [key]) === key);
    if (i < 0) throw usageError('ingest.badMapFile', `--map ${key}=...: ${key} is not one of the CSV files given (${files.join(', ')})`);
    if (out.mapOf[i] !== null) throw usageError('ingest.mapTwice', `${files[i]} has two maps (${out.mapName[i]} and ${typeof m === 'string' ? m : 'another'}); give one`);
    const loaded = await loadMap(m, problems);
    if (!loaded) continue;
    if (!loaded.mapping) throw usageError('ingest.badMapFile', `--map ${key}=${String(m)}: a per-file map must be a mapping, not a manifest`);
    out.mapOf[i] = loaded.mapping;
    out.mapName[i] = loaded.name;
  }
}

export interface FileMapOptions {
  map?: string | MappingInput | ManifestInput;
  maps?: Record<string, string | MappingInput>;
  flags?: MappingFlags;
  wide?: unknown;
}

/**
 * The map of each file, with the flags merged in: every conflict is an error (usage errors thrown
 * at once; map problems collected in `problems`, and `onProblems` called to throw them).
 */
export async function resolveFileMaps(files: string[], opts: FileMapOptions, problems: CsvProblems, onProblems: () => never): Promise<FileMaps> {
  const out: FileMaps = { mapOf: files.map(() => null), mapName: files.map(() => null) };
  if (opts.map !== undefined && !(await sharedMap(files, opts.map, out, problems))) onProblems();
  await perFileMaps(files, opts.maps ?? {}, out, problems);
  if (problems.size > 0) onProblems();
  if (opts.wide && out.mapOf.some((m) => m !== null)) throw usageError('ingest.conflict', '--wide builds the mapping from --item and --subjects-from-columns; it does not go with --map');
  for (let i = 0; i < files.length; i++) {
    const m = out.mapOf[i];
    if (m === null) continue;
    const conflicts = applyFlags(m, opts.flags ?? {});
    if (conflicts.length > 0) throw usageError('ingest.conflict', `${files[i]}: ${conflicts[0]}`);
  }
  return out;
}
