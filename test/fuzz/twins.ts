/**
 * Both backends in one process, whatever PROFPACK_BACKEND says: the JS twin is
 * imported directly, and the native module comes from the backend probe or,
 * under PROFPACK_BACKEND=js, from loading the addon here. The fuzzer needs
 * both to compare them; a missing addon is a failure, not a skip (the suite's
 * native run requires it anyway).
 */
import nodeGypBuild from 'node-gyp-build';
import { backend, nativeModule, packageRoot } from '../../lib/backend';
import { ProfpackError } from '../../lib/errors';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
let direct: Record<string, any> | null = null;

export function nativeTwin<T>(name: string): T {
  const viaProbe = nativeModule<T>(name);
  if (viaProbe !== null) return viaProbe;
  if (backend.name === 'native') throw new Error(`the native addon has no module "${name}"`);
  if (direct === null) {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const addon = nodeGypBuild(packageRoot) as Record<string, any>;
    addon.setErrorClass(ProfpackError);
    direct = addon;
  }
  const mod = direct[name] as T | undefined;
  if (mod === undefined) throw new Error(`the native addon has no module "${name}"`);
  return mod;
}
