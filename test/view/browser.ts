/**
 * A headless Chromium for the page tests: Debian's `chromium` (found on
 * PATH, else /usr/bin/chromium; .ci/run installs it) driven by
 * playwright-core. A page that throws, logs an error or asks the network for
 * anything but its own file fails the test.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

export function chromiumPath(): string {
  try {
    const found = execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
    if (found !== '') return found;
  } catch {
    // not on PATH
  }
  if (existsSync('/usr/bin/chromium')) return '/usr/bin/chromium';
  throw new Error('chromium is not installed (apt-get install -y chromium; .ci/run does this)');
}

export async function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'], headless: true });
}

export interface OpenedPage {
  page: Page;
  /** Page errors, console errors and requests for anything but the page's own file. */
  problems: string[];
  /** ms from navigation to the page's script having drawn everything. */
  loadMs: number;
}

export async function openPage(
  browser: Browser,
  file: string,
  viewport = { width: 1280, height: 900 },
): Promise<OpenedPage> {
  const page = await browser.newPage({ viewport });
  const problems: string[] = [];
  const url = `file://${file}`;
  page.on('pageerror', (e) => problems.push(`page error: ${String(e)}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
  });
  page.on('request', (r) => {
    if (r.url() !== url) problems.push(`request: ${r.url()}`);
  });
  const t0 = Date.now();
  await page.goto(url);
  await page.waitForFunction(
    () => (window as unknown as { profpackPage?: { ready: boolean } }).profpackPage?.ready === true,
  );
  const loadMs = Date.now() - t0;
  // d3-flame-graph animates frames in (250 ms here); wait until they settle.
  await page.waitForTimeout(400);
  return { page, problems, loadMs };
}
