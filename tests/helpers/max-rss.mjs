// Preloaded with `node --import` by tests that bound memory: writes the process's peak resident
// set size (bytes) to $STANDOFF_RSS_FILE when it exits.
import { writeFileSync } from 'node:fs';

process.on('exit', () => {
  if (process.env.STANDOFF_RSS_FILE) writeFileSync(process.env.STANDOFF_RSS_FILE, String(process.resourceUsage().maxRSS * 1024));
});
