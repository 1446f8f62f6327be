/**
 * The compiled addon loaded directly, whatever PROFPACK_BACKEND says, so that
 * agreement tests can run the native and JS twins side by side in one process.
 * Under the native run the addon must be there; under the JS run it is used
 * when built (it is, in CI) and the agreement tests say so when it is not.
 */
import nodeGypBuild from 'node-gyp-build';
import { packageRoot } from '../../lib/backend';
import { ProfpackError } from '../../lib/errors';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Addon = Record<string, any>;

function load(): Addon | null {
  try {
    const addon = nodeGypBuild(packageRoot) as Addon;
    addon.setErrorClass(ProfpackError);
    return addon;
  } catch {
    return null;
  }
}

export const addon: Addon | null = load();

/** The addon or a thrown error: agreement tests must not pass vacuously. */
export function requireAddon(): Addon {
  if (addon === null)
    throw new Error('native addon not built: run `npx node-gyp rebuild` (agreement tests compare both twins)');
  return addon;
}
