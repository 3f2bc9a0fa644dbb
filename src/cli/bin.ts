/**
 * Entry of the `standoff` executable: bundled as `dist/cli.js` by scripts/build.mjs, or run from
 * the sources by bin/standoff.js when the build is missing or stale.
 */
import { main } from './main.ts';

await main(process.argv);
