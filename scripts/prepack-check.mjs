// npm pack / npm publish (prepack): says loudly when prebuilds/ holds no addon for a platform the package ships
// for (issue 38: a tarball of a fresh clone held none, and installed with no compiler it fell back without a word).
// A warning, not a failure: a local pack for a test needs no prebuilds. PROFPACK_PREBUILDS_DIR: another folder.
import { existsSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = process.env.PROFPACK_PREBUILDS_DIR ?? path.join(root, 'prebuilds');
const platforms = ['linux-x64', 'linux-arm64', 'win32-x64'];
const missing = platforms.filter((p) => {
  const folder = path.join(dir, p);
  return !existsSync(folder) || !readdirSync(folder).some((f) => f.endsWith('.node'));
});
if (missing.length > 0)
  process.stderr.write(
    `\n*** profpack prepack: WARNING: prebuilds/ has no addon for ${missing.join(', ')}: ` +
      'this tarball installs there only with a compiler, else runs on the pure-JS backend ' +
      '(run `npm run prebuilds` first; scripts/pack-check.sh) ***\n\n',
  );
