// Entry of the sim worker thread (see server.ts). Plain JavaScript: a worker thread does not
// inherit the TypeScript loader the parent may have registered (bin/standoff.js, vitest, tsx), so
// it registers tsx itself, then loads the TypeScript worker.
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
