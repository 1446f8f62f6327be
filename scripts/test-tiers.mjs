// The test tiers. `npm test` runs the quick tier, `npm run test:all` and CI run every file. A test file is quick
// unless its first line tags it slow, with why and what it cost (seconds per backend, from a vitest report):
//   // test tier: slow (what makes it slow, ~N s)
// so a new file is quick until someone tags it, and no file is in no tier. A first line that names a tier but is not
// that tag (a typo) is an error, never a silent move to the other tier. docs/development.md ("Test tiers") says how
// the slow files were chosen and what the quick tier leaves out.
//   node scripts/test-tiers.mjs [quick|slow]   prints that tier's files (default: both, each with its tier)
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export const TIERS = ['quick', 'slow'];
const TAG = /^\/\/ test tier: slow \(.*\d s\b.*\)$/;

/** A file's tier from its text: 'slow' when the first line is the tag, 'quick' otherwise; throws on a malformed tag. */
export function tierOfText(text, name = 'a test file') {
  const first = text.split('\n', 1)[0].trimEnd();
  if (TAG.test(first)) return 'slow';
  if (/\btier\b/i.test(first))
    throw new Error(`${name}: first line names a tier but is not "// test tier: slow (why, ~N s)": ${first}`);
  return 'quick';
}

/** Every test file vitest runs (vitest.config.mts includes test/**\/*.test.ts), relative to `root`, sorted. */
export function testFiles(root = repoRoot) {
  return readdirSync(path.join(root, 'test'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.test.ts'))
    .map((name) => `test/${name.split(path.sep).join('/')}`)
    .sort();
}

/** The files of each tier, and each malformed tag (a message each). */
export function tiers(root = repoRoot) {
  const out = { quick: [], slow: [], bad: [] };
  for (const file of testFiles(root)) {
    try {
      out[tierOfText(readFileSync(path.join(root, file), 'utf8'), file)].push(file);
    } catch (error) {
      out.bad.push(error.message);
    }
  }
  return out;
}

/** The tier PROFPACK_TEST_TIER names: undefined (every file) when unset or 'all'; throws on anything else. */
export function tierFromEnv(value = process.env.PROFPACK_TEST_TIER) {
  if (value === undefined || value === '' || value === 'all') return undefined;
  if (!TIERS.includes(value)) throw new Error(`PROFPACK_TEST_TIER must be quick, slow or all, not ${value}`);
  return value;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const wanted = process.argv[2];
  const all = tiers();
  if (all.bad.length > 0) {
    console.error(all.bad.join('\n'));
    process.exit(1);
  }
  for (const tier of TIERS)
    if (!wanted || wanted === tier) for (const f of all[tier]) console.log(wanted ? f : `${tier} ${f}`);
}
