// CPython 3.15, the reference Tachyon reader and writer, for tests and benches alike:
// $TACHYON_CPYTHON, else ../shared/tools/cpython315/install.sh (builds it once, then prints its path).
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** shared/tools/cpython315 beside the checkout: install.sh, check_with_cpython.py. */
export const cpythonToolsDir = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  'shared',
  'tools',
  'cpython315',
);

let found;

/** The interpreter's path (the install script's last line); throws with the script's output when it cannot build one. */
export function cpythonInterpreter() {
  const fromEnv = process.env.TACHYON_CPYTHON ?? '';
  if (fromEnv !== '') return fromEnv;
  found ??= execFileSync('bash', [path.join(cpythonToolsDir, 'install.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
    .trim()
    .split('\n')
    .at(-1);
  return found;
}
