/**
 * The scripts `reports/index.html` inlines, read from the installed packages: Vega's browser
 * build (`vega/build/vega.min.js`) and vega-interpreter (Vega expressions without `eval`, so the
 * page's CSP needs no 'unsafe-eval'), turned from an ES module into a classic script that takes
 * its three vega-util helpers from the `vega` global and defines `standoffVegaInterpreter`.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { packagePath } from '../../paths.ts';
import type { HtmlAssets } from './build-index-html.ts';

/** Resolves packages as the installed standoff package does (from its root: checkout or node_modules). */
const require = createRequire(packagePath('package.json'));

/** A package's build directory (from its main entry, which lives there). */
const buildDir = (pkg: string) => dirname(require.resolve(pkg));

export async function readHtmlAssets(): Promise<HtmlAssets> {
  const [vega, interpreter] = await Promise.all([
    readFile(join(buildDir('vega'), 'vega.min.js'), 'utf8'),
    readFile(join(buildDir('vega-interpreter'), 'vega-interpreter.js'), 'utf8'),
  ]);
  return { vega, interpreter: toInterpreterScript(interpreter) };
}

/** vega-interpreter's ES module as a classic script (its only import is from vega-util). */
export function toInterpreterScript(src: string): string {
  const imp = /^import \{([^}]*)\} from 'vega-util';$/m.exec(src);
  const exp = /^export \{ (\w+) as expressionInterpreter \};$/m.exec(src);
  if (!imp || !exp) throw new Error('vega-interpreter: unexpected module shape (expected one vega-util import and the expressionInterpreter export)');
  const body = src.replace(imp[0], `var {${imp[1]}} = vega;`).replace(exp[0], `window.standoffVegaInterpreter = ${exp[1]};`);
  if (/^\s*(import|export)\b/m.test(body)) throw new Error('vega-interpreter: more imports or exports than expected');
  return `(function () {\n${body}\n})();\n`;
}
