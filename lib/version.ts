/** profpack's own version, from package.json (lib/ and dist/ both sit one folder below it). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const PACKAGE_ROOT = join(__dirname, '..');

let cached: string | undefined;

export function packageVersion(): string {
  if (cached !== undefined) return cached;
  try {
    cached = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    cached = 'unknown';
  }
  return cached;
}
