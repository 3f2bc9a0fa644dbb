/** Script-safe JSON for `reports/index.html` (embedding and size accounting use the same bytes). */
import { inertJson } from '../../escape.ts';

/**
 * JSON that cannot end a `<script>` element or a JS string line (`<`, `>`, `&` escaped; U+2028/9,
 * control and bidi characters written as `\uXXXX` by `inertJson`, the same JSON value).
 */
export function toScriptJson(value: unknown): string {
  return inertJson(
    JSON.stringify(value, (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? null : v))
      .replace(/</g, '\\u003c')
      .replace(/>/g, '\\u003e')
      .replace(/&/g, '\\u0026'),
  );
}
