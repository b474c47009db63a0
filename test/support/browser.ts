import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

/**
 * Debian's Chromium driven by playwright-core (no browser download), for the console's tests.
 * `.ci/run` installs the `chromium` package; without it the browser tests are skipped with a message.
 */

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = (): boolean => existsSync(CHROMIUM);
export const ARTIFACTS = join(import.meta.dir, '..', '..', 'test-artifacts', 'console');

export interface TestBrowser {
  /** A context on a fresh profile (--user-data-dir in a new temporary folder), 1280×800. */
  context: BrowserContext;
  close(): Promise<void>;
}

export const launchBrowser = async (): Promise<TestBrowser> => {
  const profile = mkdtempSync(join(tmpdir(), 'console-chromium-'));
  // Playwright passes the profile folder as --user-data-dir itself.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    viewport: { width: 1280, height: 800 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  mkdirSync(ARTIFACTS, { recursive: true });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
};

const AXE = readFileSync(join(import.meta.dir, '..', '..', 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

export interface AxeFinding {
  id: string;
  impact: string;
  help: string;
  nodes: string[];
}

/** axe-core's serious and critical findings on the page as it is now (injected by CDP, past the page's CSP). */
export const seriousAxeFindings = async (page: Page): Promise<AxeFinding[]> => {
  await page.evaluate(AXE);
  const json = await page.evaluate<unknown>('axe.run(document, { resultTypes: ["violations"] }).then((r) => JSON.stringify(r.violations))');
  if (typeof json !== 'string') throw new Error('axe-core did not run');
  const violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[] = JSON.parse(json);
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact ?? '', help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) }));
};

export const shot = async (page: Page, name: string): Promise<void> => {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
};
