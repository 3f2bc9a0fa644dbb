/**
 * The field names a zod object schema accepts at a path (`['subjects', 0]` -> the model spec's
 * fields), through optional / default / prefault wrappers and arrays. For "did you mean" on an
 * unknown field.
 */
import type { z } from 'zod';

type Def = { innerType?: z.ZodType; element?: z.ZodType; shape?: Record<string, z.ZodType> };
const def = (s: z.ZodType | undefined): Def | undefined => (s as unknown as { _zod?: { def: Def } } | undefined)?._zod?.def;

function unwrap(s: z.ZodType | undefined): z.ZodType | undefined {
  while (def(s)?.innerType) s = def(s)!.innerType;
  return s;
}

export function zodKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let s = unwrap(schema);
  for (const p of path) s = unwrap(typeof p === 'number' ? def(s)?.element : def(s)?.shape?.[String(p)]);
  return Object.keys(def(s)?.shape ?? {});
}
