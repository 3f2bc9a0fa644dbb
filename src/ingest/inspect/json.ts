/**
 * JSON as Inspect logs and lm-eval output write it: {@link parseJsonTolerant} also reads the bare
 * `NaN`, `Infinity` and `-Infinity` Python's `json` writes (`JSON.parse` rejects them; the tokens
 * are rewritten outside strings only); values nested past {@link MAX_JSON_DEPTH} are refused
 * ({@link isTooDeep}, {@link JsonTooDeep}); {@link resolveAttachments} replaces Inspect's
 * `attachment://<ref>` strings, walking with its own stack.
 */

/**
 * `JSON.parse`, also accepting the bare `NaN`, `Infinity` and `-Infinity` tokens Python writes.
 * The tokens are rewritten only outside strings (`"NaN"` inside a string stays text); `Infinity`
 * becomes `1e999` (which parses to Infinity) and `NaN` a sentinel string turned back into NaN.
 */
export function parseJsonTolerant(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (first) {
    const { text: fixed, nan } = rewriteNonFinite(text);
    if (fixed === text) throw first;
    if (!nan) return JSON.parse(fixed);
    return JSON.parse(fixed, (_k, v) => (v === NAN_SENTINEL ? NaN : v));
  }
}

const NAN_SENTINEL = '\u0000standoff:NaN\u0000';
const NAN_SENTINEL_JSON = JSON.stringify(NAN_SENTINEL);

function rewriteNonFinite(text: string): { text: string; nan: boolean } {
  const parts: string[] = [];
  let last = 0;
  let nan = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      // skip the string, honouring escapes
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 92 /* \ */) i++;
        else if (d === 34) break;
      }
    } else if (c === 78 /* N */ && text.startsWith('NaN', i)) {
      parts.push(text.slice(last, i), NAN_SENTINEL_JSON);
      nan = true;
      i += 2;
      last = i + 1;
    } else if (c === 73 /* I */ && text.startsWith('Infinity', i)) {
      parts.push(text.slice(last, i), '1e999');
      i += 7;
      last = i + 1;
    }
  }
  if (last === 0) return { text, nan: false };
  parts.push(text.slice(last));
  return { text: parts.join(''), nan };
}

const ATTACHMENT = 'attachment://';

/** Deepest nesting of arrays and objects a sample's mapped fields may have (deeper is refused). */
export const MAX_JSON_DEPTH = 1000;

/** A value nested deeper than {@link MAX_JSON_DEPTH}: a data error for the member that holds it. */
export class JsonTooDeep extends Error {
  constructor() {
    super(`JSON nested more than ${MAX_JSON_DEPTH} levels deep (a damaged or hostile log)`);
  }
}

/** Whether a parsed JSON value nests arrays and objects more than {@link MAX_JSON_DEPTH} deep (walked without recursion). */
export function isTooDeep(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  const stack: Array<[object, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [o, depth] = stack.pop()!;
    if (depth > MAX_JSON_DEPTH) return true;
    if (Array.isArray(o)) {
      for (let i = 0; i < o.length; i++) if (o[i] !== null && typeof o[i] === 'object') stack.push([o[i], depth + 1]);
    } else {
      for (const k in o) {
        const x = (o as Record<string, unknown>)[k];
        if (x !== null && typeof x === 'object') stack.push([x, depth + 1]);
      }
    }
  }
  return false;
}

/**
 * Replaces whole-string `attachment://<ref>` values (deeply, in place) using `lookup`; unknown refs
 * stay. Walks with its own stack, so no nesting overflows the call stack; throws
 * {@link JsonTooDeep} past {@link MAX_JSON_DEPTH} levels, so later steps (serializing metadata and
 * tool arguments) never meet a deeper value either.
 */
export function resolveAttachments<T>(value: T, lookup: (ref: string) => string | undefined): T {
  if (typeof value === 'string') return resolveRef(value, lookup) as T;
  if (value === null || typeof value !== 'object') return value;
  // Parallel stacks of objects and depths, and no closure per node: this walk runs over every
  // message of every sample (ingest inspect's hot path).
  const objects: Array<Record<string | number, unknown>> = [value as Record<string, unknown>];
  const depths: number[] = [1];
  while (objects.length > 0) {
    const o = objects.pop()!;
    const depth = depths.pop()!;
    if (depth > MAX_JSON_DEPTH) throw new JsonTooDeep();
    if (Array.isArray(o)) {
      for (let i = 0; i < o.length; i++) {
        const x = o[i];
        if (typeof x === 'string') {
          if (x.startsWith(ATTACHMENT)) o[i] = resolveRef(x, lookup);
        } else if (x !== null && typeof x === 'object') {
          objects.push(x as Record<string, unknown>);
          depths.push(depth + 1);
        }
      }
    } else {
      for (const k in o) {
        const x = o[k];
        if (typeof x === 'string') {
          if (x.startsWith(ATTACHMENT)) {
            const r = resolveRef(x, lookup);
            if (r !== x) o[k] = r;
          }
        } else if (x !== null && typeof x === 'object') {
          objects.push(x as Record<string, unknown>);
          depths.push(depth + 1);
        }
      }
    }
  }
  return value;
}

/** `attachment://<ref>` replaced by its text (unknown refs stay). */
function resolveRef(v: string, lookup: (ref: string) => string | undefined): string {
  return v.startsWith(ATTACHMENT) ? (lookup(v.slice(ATTACHMENT.length)) ?? v) : v;
}
