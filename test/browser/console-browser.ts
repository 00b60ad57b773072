/**
 * What the console's browser tests share: one Chromium (Debian's package, driven by playwright-core: browsers cannot
 * be downloaded here) and a page that records every console error and uncaught exception, so a test can fail on them.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { projectRoot } from '../../scripts/project-root';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/**
 * Where the suite writes its screenshots: the README's, in docs/images, with UPDATE_SCREENSHOTS=1; otherwise a
 * temporary directory, so that a test run leaves the checkout as it found it.
 */
export const IMAGES =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? join(projectRoot(__dirname), 'docs', 'images')
    : mkdtempSync(join(tmpdir(), 'toolhost-screenshots-'));

export interface ConsolePage {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** Console errors and page errors so far; a test expects it empty. */
  errors: string[];
}

/**
 * Chromium logs every HTTP error answer of a fetch as a console error ("Failed to load resource: … status of 400").
 * For the registry's API those are answers the app handles and shows (a 400 with the fields it names, a 409, a 501):
 * they are left out. Every other console error, and any on a non-API URL (a missing asset, a CSP violation), counts.
 */
function isHandledApiAnswer(text: string, url: string): boolean {
  return /^Failed to load resource: the server responded with a status of \d{3}/.test(text) && /\/v1\//.test(url);
}

export async function openConsole(baseUrl: string): Promise<ConsolePage> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    if (isHandledApiAnswer(message.text(), message.location().url)) return;
    errors.push(`console: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
  return { browser, context, page, errors };
}
