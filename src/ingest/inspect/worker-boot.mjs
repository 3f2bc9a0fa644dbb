// Entry of the ingest inspect worker thread when running from the TypeScript sources (tests, tsx):
// a worker thread does not inherit its parent's TypeScript loader, so it registers tsx itself.
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
