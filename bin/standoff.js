#!/usr/bin/env node
// Launcher: runs the TypeScript CLI through tsx's loader so `npx standoff` works without a build step.
import { register } from 'tsx/esm/api';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';

register();
const here = dirname(fileURLToPath(import.meta.url));
await import(pathToFileURL(join(here, '..', 'src', 'cli', 'main.ts')).href);
