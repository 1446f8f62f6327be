/**
 * speedscope 1.25.0's built app (npm devDependency) in Chromium, loading a
 * file the way its CLI does (a script calling speedscope.loadFileFromBase64,
 * named in #localProfilePath): what its importer makes of our output.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { repoRoot } from '../support/environment';

/** speedscope 1.25.0's Sandwich table (Total, Self, name per function) for a file, loaded as its CLI loads one. */
export async function speedscopeTable(
  browser: Browser,
  work: string,
  file: string,
): Promise<{ table: string; log: string[] }> {
  const loader = path.join(work, `load-${path.basename(file)}.js`);
  writeFileSync(
    loader,
    `speedscope.loadFileFromBase64(${JSON.stringify(path.basename(file))}, ${JSON.stringify(readFileSync(file).toString('base64'))})`,
  );
  const page = await browser.newPage();
  const log: string[] = [];
  page.on('console', (m) => log.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => log.push(`pageerror: ${String(e)}`));
  page.on('dialog', async (d) => {
    log.push(`dialog: ${d.message()}`);
    await d.dismiss();
  });
  await page.goto(
    `file://${path.join(repoRoot, 'node_modules', 'speedscope', 'dist', 'release', 'index.html')}#localProfilePath=${loader}`,
  );
  // Once a profile is in, the title is "NAME - speedscope" (NAME: the file's, or a speedscope file's own name).
  await page.waitForFunction(() => document.title.endsWith(' - speedscope'), undefined, { timeout: 60_000 });
  await page.keyboard.press('3');
  await page.waitForFunction(() => document.body.innerText.includes('Symbol Name'));
  const text = await page.evaluate(() => document.body.innerText);
  await page.close();
  return { table: text.slice(text.indexOf('Total')), log };
}

/** The Sandwich table's rows: function name → [total, self], times in ms and sizes in bytes as speedscope prints them. */
export function sandwichRows(table: string): Map<string, [number, number]> {
  return new Map(sandwichList(table).map(([name, total, self]) => [name, [total, self]]));
}

/** The Sandwich table's rows in order, `[name, total, self]` (two frames of one name are two rows). */
export function sandwichList(table: string): [string, number, number][] {
  const lines = table
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const rows: [string, number, number][] = [];
  const value = (cell: string): number => {
    const m = /^([\d.]+)(ns|µs|us|ms|s|B|KB|MB|GB)\b/.exec(cell);
    if (m === null) throw new Error(`not a speedscope value: ${cell}`);
    const scale: Record<string, number> = {
      ns: 1e-6,
      µs: 1e-3,
      us: 1e-3,
      ms: 1,
      s: 1e3,
      B: 1,
      KB: 1024,
      MB: 1024 ** 2,
      GB: 1024 ** 3,
    };
    return Number(m[1]) * scale[m[2]!]!;
  };
  // After the header "Total Self Symbol Name": total, self, name, per row.
  for (let i = lines.indexOf('Total\tSelf\tSymbol Name') + 1; i > 0 && i + 2 < lines.length; i += 3)
    rows.push([lines[i + 2]!, value(lines[i]!), value(lines[i + 1]!)]);
  return rows;
}
