/** Script-safe JSON for `reports/index.html` (embedding and size accounting use the same bytes). */

/** JSON that cannot end a `<script>` element or a JS string line (`<`, `>`, `&`, U+2028/9 escaped). */
export function toScriptJson(value: unknown): string {
  return JSON.stringify(value, (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? null : v))
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}
