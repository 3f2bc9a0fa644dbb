// ES module resolve hook of register.mjs (runs on the loader thread).
import { appendFileSync } from 'node:fs';

export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(process.env.STANDOFF_MODULE_LOG, `${r.url}\n`);
  return r;
}
