/**
 * Headless figure rendering: Vega-Lite spec -> Vega (vega-lite `compile`) -> SVG (a Vega View with
 * the `none` renderer, `toSVG()`) -> PNG (resvg).
 *
 * Fonts: text must never silently disappear, so resvg gets the font files explicitly and does not
 * look at system fonts (`loadSystemFonts: false`). The fonts are the DejaVu Sans TTFs bundled in
 * `assets/fonts/` (free to redistribute, see `assets/fonts/LICENSE-DejaVu.txt`); if they are
 * missing, Debian's `fonts-dejavu-core` files are used; if neither exists, rendering fails with
 * `report.noFont` instead of producing an image without text. Specs set `config.font` to
 * {@link FONT_FAMILY} so Vega's text layout and resvg's font agree.
 *
 * Determinism: Vega measures text with its built-in estimator (no canvas in Node) and the SVG is a
 * pure function of the spec; resvg's PNG is a pure function of the SVG and the font bytes.
 *
 * Offline and sandboxed: a figure's data comes only from its inline `values` (the report's data,
 * or a notebook's SQL). Vega's default loader reads any file or URL, so a spec naming a `url`
 * (data, an image mark, a link) is refused before rendering (`report.externalData`), and the View
 * gets a loader that refuses every load and every URL besides (no request is made, no file read).
 * Text in the SVG is made inert as well: control and bidi characters become visible `\uXXXX`.
 */
import { existsSync } from 'node:fs';
import * as vega from 'vega';
import * as vl from 'vega-lite';
import { renderAsync } from '@resvg/resvg-js';
import { StandoffError } from '../errors.ts';
import { visibleControls } from '../escape.ts';
import { packagePath } from '../paths.ts';

export const FONT_FAMILY = 'DejaVu Sans';

const FONT_CANDIDATES: string[][] = [
  [packagePath('assets', 'fonts', 'DejaVuSans.ttf'), packagePath('assets', 'fonts', 'DejaVuSans-Bold.ttf')],
  ['/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf', '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf'],
];

let fontFilesCache: string[] | null = null;

/** The font files passed to resvg (regular and, when present, bold). */
export function fontFiles(): string[] {
  if (fontFilesCache) return fontFilesCache;
  for (const [regular, bold] of FONT_CANDIDATES) {
    if (existsSync(regular)) {
      fontFilesCache = existsSync(bold) ? [regular, bold] : [regular];
      return fontFilesCache;
    }
  }
  throw new StandoffError(
    'report.noFont',
    'store',
    `no font file for figures: expected assets/fonts/DejaVuSans.ttf or /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf (apt-get install fonts-dejavu-core)`,
  );
}

export interface RenderedFigure {
  /** The Vega-Lite spec as written to `<name>.vl.json` (data inlined). */
  spec: object;
  svg: string;
  png: Buffer;
}

export interface RenderOptions {
  /** PNG scale factor (default 2, for crisp images on GitHub). */
  scale?: number;
}

/** A data source or mark in a (Vega or Vega-Lite) spec that names a URL or file, or null. */
export function findExternalRef(spec: unknown, path = ''): string | null {
  if (Array.isArray(spec)) {
    for (let i = 0; i < spec.length; i++) {
      const found = findExternalRef(spec[i], `${path}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  if (spec === null || typeof spec !== 'object') return null;
  for (const [k, v] of Object.entries(spec as Record<string, unknown>)) {
    if (k === 'values' || k === 'datasets') continue; // inline data rows: their fields are data
    const here = path ? `${path}.${k}` : k;
    // data.url (Vega and Vega-Lite), image marks' url and href channels (a constant or field).
    if ((k === 'url' || k === 'href') && v !== undefined && v !== null) return `${here} = ${JSON.stringify(v).slice(0, 80)}`;
    const found = findExternalRef(v, here);
    if (found) return found;
  }
  return null;
}

/** Most rows a figure's data generators may make (Vega-Lite `sequence`, Vega's `sequence` transform). */
export const MAX_GENERATED_ROWS = 100_000;
/** Smallest graticule step, in degrees (a smaller one draws more lines than any figure needs). */
const MIN_GRATICULE_STEP = 0.5;

/**
 * A data generator in a (Vega or Vega-Lite) spec that would make more than MAX_GENERATED_ROWS
 * rows, or takes a computed bound, or null. Vega-Lite's `{"sequence": {start, stop, step}}` and
 * Vega's `{"type": "sequence", ...}` transform make (stop - start) / step rows; a graticule's steps
 * must be at least MIN_GRATICULE_STEP degrees. In a `compiled` spec, sequence transforms bounded by
 * signals (Vega-Lite's own, for facets) are not counted.
 */
export function findUnboundedGenerator(spec: unknown, path = '', compiled = false): string | null {
  if (Array.isArray(spec)) {
    for (let i = 0; i < spec.length; i++) {
      const found = findUnboundedGenerator(spec[i], `${path}[${i}]`, compiled);
      if (found) return found;
    }
    return null;
  }
  if (spec === null || typeof spec !== 'object') return null;
  const o = spec as Record<string, unknown>;
  const sequence = o.type === 'sequence' ? o : null;
  for (const [k, v] of Object.entries(o)) {
    if (k === 'values' || k === 'datasets') continue;
    const here = path ? `${path}.${k}` : k;
    const gen = k === 'sequence' && v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : null;
    if (gen) {
      const rows = sequenceRows(gen);
      if (rows === null || rows > MAX_GENERATED_ROWS) return `${here} making ${rows === null ? 'an unbounded number of' : rows.toExponential(2)} rows`;
    }
    if (k === 'graticule' && v !== null && typeof v === 'object') {
      for (const [sk, sv] of Object.entries(v as Record<string, unknown>)) {
        const step = Array.isArray(sv) ? sv : [sv];
        if (/^step/.test(sk) && step.some((x) => typeof x !== 'number' || !(x >= MIN_GRATICULE_STEP))) return `${here}.${sk} = ${JSON.stringify(sv).slice(0, 40)} (a graticule step is at least ${MIN_GRATICULE_STEP} degrees)`;
      }
    }
    const found = findUnboundedGenerator(v, here, compiled);
    if (found) return found;
  }
  if (sequence) {
    // Vega-Lite compiles facets into sequence transforms bounded by signals of the data: in a
    // compiled spec only plain-number bounds (from a Vega-Lite sequence) are counted.
    const rows = sequenceRows(sequence);
    if (rows === null && compiled) return null;
    if (rows === null || rows > MAX_GENERATED_ROWS) return `${path || 'a'} sequence transform making ${rows === null ? 'an unbounded number of' : rows.toExponential(2)} rows`;
  }
  return null;
}

/** Rows a sequence {start = 0, stop, step = 1} makes, or null when a bound is not a plain number. */
function sequenceRows(g: Record<string, unknown>): number | null {
  const start = g.start ?? 0;
  const step = g.step ?? 1;
  const stop = g.stop;
  if (typeof start !== 'number' || typeof stop !== 'number' || typeof step !== 'number' || !Number.isFinite(start) || !Number.isFinite(stop) || !Number.isFinite(step) || step === 0) return null;
  return Math.max(0, Math.ceil((stop - start) / step));
}

const refused = (what: unknown) => new Error(`figures may not load ${JSON.stringify(String(what)).slice(0, 100)}: data must be inline (a notebook's sql block or the block's own values)`);

/** A Vega loader that refuses every URL and file (Vega calls `sanitize` before any load or link). */
function refusingLoader(log: string[]) {
  const refuse = async (what: unknown): Promise<never> => {
    log.push(String(what));
    throw refused(what);
  };
  return { sanitize: refuse, load: refuse, http: refuse, file: refuse, fileAccess: false };
}

/** Compiles a Vega-Lite spec and renders it to SVG and PNG. */
export async function renderFigure(spec: object, opts: RenderOptions = {}): Promise<RenderedFigure> {
  const files = fontFiles();
  const external = findExternalRef(spec);
  if (external) throw new StandoffError('report.externalData', 'data', `figure data must be inline: the spec names ${external}; use values (or a notebook's sql block), not a url or file`);
  const tooLarge = (where: string) => new StandoffError('report.generatorTooLarge', 'data', `figure data generator too large: ${where}; a figure may generate at most ${MAX_GENERATED_ROWS} rows`);
  const generator = findUnboundedGenerator(spec);
  if (generator) throw tooLarge(generator);
  const compiled = vl.compile(spec as vl.TopLevelSpec, { logger: QUIET }).spec;
  const compiledExternal = findExternalRef(compiled);
  if (compiledExternal) throw new StandoffError('report.externalData', 'data', `figure data must be inline: the compiled spec names ${compiledExternal}`);
  const compiledGenerator = findUnboundedGenerator(compiled, '', true);
  if (compiledGenerator) throw tooLarge(`the compiled spec's ${compiledGenerator}`);
  const attempts: string[] = [];
  const view = new vega.View(vega.parse(compiled), { renderer: 'none', loader: refusingLoader(attempts) as unknown as vega.Loader });
  let svg: string;
  try {
    svg = inertSvgText(normalizeIds(await view.toSVG()));
  } finally {
    view.finalize();
  }
  // Vega logs a failed load and renders on without the data: that is an error here.
  if (attempts.length > 0) throw new StandoffError('report.externalData', 'data', refused(attempts[0]).message);
  const png = (
    await renderAsync(svg, {
      font: { fontFiles: files, loadSystemFonts: false, defaultFontFamily: FONT_FAMILY, sansSerifFamily: FONT_FAMILY },
      fitTo: { mode: 'zoom', value: opts.scale ?? 2 },
      background: 'white',
      logLevel: 'off',
    })
  ).asPng();
  return { spec, svg, png: Buffer.from(png) };
}

/** Control and bidi characters in the SVG's text made visible (`\uXXXX`, see `src/escape.ts`). */
export function inertSvgText(svg: string): string {
  return visibleControls(svg);
}

/**
 * Vega numbers gradients and clip paths with process-wide counters, so the same figure rendered
 * after another one gets other ids. Renumbers them by order of appearance (ids and references),
 * so an SVG is a function of its spec alone.
 */
export function normalizeIds(svg: string): string {
  const map = new Map<string, string>();
  const counters = new Map<string, number>();
  for (const m of svg.matchAll(/\bid="((gradient_|clip|pattern_)(\d+))"/g)) {
    if (map.has(m[1])) continue;
    const n = counters.get(m[2]) ?? 0;
    counters.set(m[2], n + 1);
    map.set(m[1], `${m[2]}${n}`);
  }
  if (map.size === 0) return svg;
  return svg.replace(/(id="|url\(#|href="#)((?:gradient_|clip|pattern_)\d+)(?=[")])/g, (whole, pre: string, id: string) => pre + (map.get(id) ?? id));
}

/**
 * Renders several figures: SVGs one after the other on this thread, PNG rasterisation in resvg's
 * worker threads in parallel. Results come back in input order.
 */
export async function renderFigures(specs: object[], opts: RenderOptions = {}): Promise<RenderedFigure[]> {
  return Promise.all(specs.map((s) => renderFigure(s, opts)));
}

/** vega-lite's compile warnings (e.g. about faceted independent scales) are not for the user. */
export const QUIET = {
  level(): typeof QUIET {
    return QUIET;
  },
  info: () => QUIET,
  warn: () => QUIET,
  error: () => QUIET,
  debug: () => QUIET,
} as unknown as NonNullable<NonNullable<Parameters<typeof vl.compile>[1]>['logger']>;
