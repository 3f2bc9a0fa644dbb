/**
 * The per-model price table of `standoff costs --prices FILE` and `standoff report build --prices
 * FILE`: `{ "<model>": { "input_per_mtok": USD, "output_per_mtok": USD } }` (USD per million
 * tokens). A bad table is a one-line data error naming the file, the model (row) and the field
 * (exit 3); an unreadable file a store/IO error (exit 4). No other imports, so the report context
 * can name its type without a circle.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { dataError, storeError } from '../errors.ts';

/** USD per million tokens, by model. */
export type PriceTable = Record<string, { input_per_mtok: number; output_per_mtok: number }>;

/** A price table as read from its file: the table, the file's name and the SHA-256 of its bytes. */
export interface LoadedPrices {
  file: string;
  sha256: string;
  table: PriceTable;
}

/** The price table's identity, as results.json and `costs --json` record it. */
export interface PriceTableInfo {
  file: string;
  sha256: string;
  models: string[];
}

const PRICE_FIELDS = ['input_per_mtok', 'output_per_mtok'] as const;

/**
 * Checks a price table's text: `{ "<model>": { "input_per_mtok": n, "output_per_mtok": n } }`.
 * Throws a one-line data error naming the file, the model (row) and the field.
 */
export function parsePriceTable(text: string, file: string): PriceTable {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw dataError('costs.badPrices', `${file}: not valid JSON (${(e as Error).message.replace(/\s+/g, ' ')})`);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw dataError('costs.badPrices', `${file}: expected an object of model -> {"input_per_mtok": USD, "output_per_mtok": USD}`);
  for (const [model, p] of Object.entries(raw as Record<string, unknown>)) {
    const where = `${file}: model ${JSON.stringify(model)}`;
    if (p === null || typeof p !== 'object' || Array.isArray(p)) throw dataError('costs.badPrices', `${where}: expected {"input_per_mtok": USD, "output_per_mtok": USD}`);
    for (const k of PRICE_FIELDS) {
      const v = (p as Record<string, unknown>)[k];
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw dataError('costs.badPrices', `${where}: field "${k}" must be a non-negative number, got ${v === undefined ? 'nothing' : JSON.stringify(v)}`);
    }
    const extra = Object.keys(p).find((k) => !(PRICE_FIELDS as readonly string[]).includes(k));
    if (extra !== undefined) throw dataError('costs.badPrices', `${where}: field "${extra}" is not a known field (${PRICE_FIELDS.join(', ')})`);
  }
  return raw as PriceTable;
}

/** Reads a price table file (unreadable: store error, exit 4; bad content: data error, exit 3). */
export function loadPrices(file: string): LoadedPrices {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (e) {
    throw storeError('costs.pricesFile', `${file}: cannot read the --prices file`, e);
  }
  const table = parsePriceTable(bytes.toString('utf8'), file);
  return { file: basename(file), sha256: createHash('sha256').update(bytes).digest('hex'), table };
}

/** The table of {@link loadPrices}. */
export function loadPriceTable(file: string): PriceTable {
  return loadPrices(file).table;
}

export const priceTableInfo = (p: LoadedPrices | null): PriceTableInfo | null =>
  p ? { file: p.file, sha256: p.sha256, models: Object.keys(p.table).sort() } : null;

