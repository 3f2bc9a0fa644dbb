/**
 * A real headless Chromium for the report's browser tests: Debian's `/usr/bin/chromium` (no
 * browser download), driven by playwright-core. `browserAvailable()` says whether it is installed;
 * in CI (`CI=true`) a missing browser is a failure, never a skip. Each test file launches one
 * browser (a persistent context in a fresh temp profile) and closes it in afterAll.
 *
 * `openPage` records console errors, page errors, dialogs and every request that is not the
 * page's own file (`file:`/`data:` are the page and its inline images), and aborts the latter.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Browser globals inside page.evaluate callbacks (the project's TS has no DOM lib). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const document: any;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const window: any;


export const CHROMIUM = process.env.STANDOFF_CHROMIUM ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** True when the browser exists; in CI a missing browser throws (the tests must not skip there). */
export function browserAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.CI) throw new Error(`browser tests need Chromium at ${CHROMIUM} (apt-get install chromium; .ci/run installs it)`);
  console.warn(`skipping browser tests: no Chromium at ${CHROMIUM} (apt-get install chromium)`);
  return false;
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'standoff-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 800 },
    deviceScaleFactor: 1,
    offline: true,
    timeout: 120_000,
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export interface PageLog {
  errors: string[];
  /** Requests other than the page's own file and data: URLs. */
  foreign: string[];
  dialogs: string[];
}

/** Opens `file` (an absolute path) and waits until every figure has rendered or failed. */
export async function openPage(b: Browser, file: string): Promise<{ page: Page; log: PageLog }> {
  const page = await b.context.newPage();
  const log: PageLog = { errors: [], foreign: [], dialogs: [] };
  const own = `file://${file}`;
  page.on('console', (m) => {
    if (m.type() === 'error') log.errors.push(m.text());
  });
  page.on('pageerror', (e) => log.errors.push(`pageerror: ${e.message}`));
  page.on('dialog', (d) => {
    log.dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('request', (r) => {
    const u = r.url();
    if (!(u === own || u.startsWith('data:'))) log.foreign.push(u);
  });
  await page.route('**/*', (route) => {
    const u = route.request().url();
    if (u === own || u.startsWith('data:')) return route.continue();
    log.foreign.push(u);
    return route.abort();
  });
  await page.goto(own, { waitUntil: 'load', timeout: 120_000 });
  await page.waitForFunction(() => [...document.querySelectorAll('figure.vega')].every((f) => f.hasAttribute('data-rendered')), null, { timeout: 120_000 });
  return { page, log };
}
