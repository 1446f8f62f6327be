// `npm run bench -- NAME [args]` runs bench/NAME.mjs; with no name, lists them.
// Every benchmark reports ratios against a baseline measured in the same run
// (interleaved rounds, medians), and its results go to bench/RESULTS.md.
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const available = readdirSync(here)
  .filter((f) => f.endsWith('.mjs') && f !== 'run.mjs' && !f.startsWith('_'))
  .map((f) => f.slice(0, -4))
  .sort();
const [name, ...args] = process.argv.slice(2);
if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- <${available.join('|')}> [args]`);
  process.exit(name ? 2 : 0);
}
const run = spawnSync(process.execPath, ['--expose-gc', path.join(here, `${name}.mjs`), ...args], { stdio: 'inherit' });
process.exit(run.status ?? 1);
