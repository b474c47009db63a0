import type { Locator, Page } from 'playwright-core';
import { type AxeFinding, seriousAxeFindings, shot } from './browser.ts';

/** Driving the console by accessible names (contract §10), for test/console.test.ts. */

export class ConsolePage {
  readonly findings: Record<string, AxeFinding[]> = {};
  constructor(readonly page: Page) {}

  /** axe-core's serious and critical findings on the page as it is, and a screenshot. */
  async axe(name: string): Promise<void> {
    this.findings[name] = await seriousAxeFindings(this.page);
    await shot(this.page, name);
  }

  nav(): Locator {
    return this.page.getByRole('navigation', { name: 'Console pages' });
  }

  async go(title: string): Promise<void> {
    await this.nav().getByRole('link', { name: title, exact: true }).click();
    await this.page.getByRole('heading', { level: 2 }).first().waitFor();
  }

  /** Waits until the page shows no `Loading…` (its first reads answered). */
  async loaded(): Promise<void> {
    await this.page
      .locator('[aria-busy="true"]')
      .first()
      .waitFor({ state: 'detached', timeout: 10_000 })
      .catch(() => undefined);
  }

  async openCreate(summary: string): Promise<Locator> {
    const details = this.page.locator('details.create', { has: this.page.locator('summary', { hasText: summary }) });
    if ((await details.getAttribute('open')) === null) await details.locator('summary').click();
    return details;
  }

  async signIn(token: string): Promise<void> {
    await this.page.getByLabel('Token').fill(token);
    await this.page.getByRole('button', { name: 'Sign in' }).click();
    await this.page.getByRole('heading', { name: 'Configuration status' }).waitFor();
  }

  /** Records every text the stage lines (`.stage`) show from now on, in order (read with `stagesSeen`). */
  async watchStages(): Promise<void> {
    await this.page.evaluate(`(() => {
      window.__stages = [];
      const note = () => document.querySelectorAll('.stage').forEach((el) => {
        const t = el.textContent || '';
        if (window.__stages[window.__stages.length - 1] !== t) window.__stages.push(t);
      });
      new MutationObserver(note).observe(document.body, { subtree: true, childList: true, characterData: true });
    })()`);
  }

  /**
   * Waits until one stage line recorded since `watchStages` contains every one of `parts` (a stage
   * already on the page before does not count). The default wait is well inside the tests' own
   * timeouts: a wait that fails prints what was seen, where a test timeout would print nothing.
   */
  async waitSeen(parts: readonly string[], timeoutMs = 90_000): Promise<void> {
    await this.page.waitForFunction(
      (all: readonly string[]) => {
        const seen: unknown = Reflect.get(window, '__stages');
        return Array.isArray(seen) && seen.some((s) => all.every((p) => String(s).includes(p)));
      },
      parts,
      { timeout: timeoutMs },
    );
  }

  /** The stage lines and form errors on the page now (printed when a wait for a stage fails). */
  async shownNow(): Promise<string[]> {
    const shown = await this.page.locator('.stage, .form-error').allTextContents();
    // The last requests the page completed (path, start and duration in ms), and the page's clock.
    const done = await this.page.evaluate<string[]>(
      'performance.getEntriesByType("resource").slice(-8).map((e) => `${new URL(e.name).pathname} @${Math.round(e.startTime)} +${Math.round(e.duration)}`).concat(`now @${Math.round(performance.now())} ${document.visibilityState} focus=${document.hasFocus()}`)',
    );
    return [...shown, ...done];
  }

  async stagesSeen(): Promise<string[]> {
    const seen = await this.page.evaluate<unknown>('window.__stages');
    return Array.isArray(seen) ? seen.map(String) : [];
  }

  /** Every page in the navigation, each checked with axe-core (screenshots `prefix-<page>`). */
  async axeEveryPage(prefix: string): Promise<string[]> {
    const titles = await this.nav().getByRole('link').allTextContents();
    for (const title of titles) {
      await this.go(title);
      await this.loaded();
      await this.axe(`${prefix}-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`);
    }
    return titles;
  }
}
