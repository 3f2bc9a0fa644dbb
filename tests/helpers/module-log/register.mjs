// Loaded with `node --import <this file>`: appends every module the process resolves (ES modules
// through a resolve hook, CommonJS through Module._resolveFilename) to the file named by
// STANDOFF_MODULE_LOG, one path or URL a line. Used by tests/cli/startup.test.ts.
import Module, { register } from 'node:module';
import { appendFileSync } from 'node:fs';

const log = process.env.STANDOFF_MODULE_LOG;
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (...args) {
  const file = resolveFilename.apply(this, args);
  appendFileSync(log, `${file}\n`);
  return file;
};
register('./hooks.mjs', import.meta.url);
