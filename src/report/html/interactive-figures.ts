/**
 * The report's figures for `index.html`: the same Vega-Lite specs as `figures/*.vl.json` (same
 * data), with tooltips that show every field of a mark's row (the exact rate, interval ends and
 * n) and, where colour names a category (the subject), legend filtering: clicking a legend entry
 * fades the other categories. Compiled to Vega here, so the page needs only Vega itself.
 */
import * as vl from 'vega-lite';
import { StandoffError } from '../../errors.ts';
import { visibleControls } from '../../escape.ts';
import { QUIET, findExternalRef } from '../render-figure.ts';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Every unit spec (an object with a `mark`) inside `spec`, depth first. */
function units(spec: unknown, out: Json[] = []): Json[] {
  if (Array.isArray(spec)) spec.forEach((s) => units(s, out));
  else if (isObject(spec)) {
    if ('mark' in spec) out.push(spec);
    for (const [k, v] of Object.entries(spec)) if (k !== 'data' && k !== 'encoding' && k !== 'config') units(v, out);
  }
  return out;
}

const nominalColour = (u: Json): string | null => {
  const c = isObject(u.encoding) ? u.encoding.color : undefined;
  return isObject(c) && c.type === 'nominal' && typeof c.field === 'string' ? c.field : null;
};

/** Every string in a JSON value with control and bidi characters made visible (as the SVGs have them). */
const inertStrings = (v: unknown): unknown =>
  typeof v === 'string' ? visibleControls(v) : Array.isArray(v) ? v.map(inertStrings) : isObject(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, inertStrings(x)])) : v;

/**
 * The figure's spec with data tooltips and legend filtering (a deep copy; the input is not
 * changed). Its strings (data, sort orders, domains alike, so they still match) have control and
 * bidi characters made visible, as in the report's SVGs.
 */
export function toInteractiveSpec(spec: Json): Json {
  const copy = inertStrings(spec) as Json;
  const all = units(copy);
  for (const u of all) {
    const mark = isObject(u.mark) ? u.mark : { type: u.mark };
    u.mark = { ...mark, tooltip: { content: 'data' } };
    if (isObject(u.encoding)) delete u.encoding.tooltip;
  }
  const host = all.find((u) => nominalColour(u) !== null);
  const field = host ? nominalColour(host) : null;
  if (host && field) {
    host.params = [{ name: 'legend_pick', select: { type: 'point', fields: [field] }, bind: 'legend' }];
    for (const u of all) {
      const enc = isObject(u.encoding) ? u.encoding : null;
      if (!enc || enc.opacity) continue;
      // Layers that share the category (their rows carry `field`) fade with it.
      const usesField = Object.values(enc).some((c) => isObject(c) && c.field === field) || u === host;
      if (usesField) enc.opacity = { condition: { param: 'legend_pick', value: 1 }, value: 0.15 };
    }
  }
  return copy;
}

/** The Vega spec the page renders for a figure (no URL anywhere: checked). */
export function toVegaSpec(spec: Json): Json {
  const compiled = vl.compile(toInteractiveSpec(spec) as unknown as vl.TopLevelSpec, { logger: QUIET }).spec as unknown as Json;
  const external = findExternalRef(compiled);
  if (external) throw new StandoffError('report.externalData', 'data', `figure data must be inline: the compiled spec names ${external}`);
  return compiled;
}
