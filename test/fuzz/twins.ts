/**
 * Both backends in one process, whatever PROFPACK_BACKEND says: the JS twin is
 * imported directly, and the native module comes from the backend probe or,
 * under PROFPACK_BACKEND=js, from loading the addon here. The fuzzer needs
 * both to compare them; a missing addon is a failure, not a skip (the suite's
 * native run requires it anyway).
 */
import { backend, nativeModule } from '../../lib/backend';
import { requireAddon } from '../support/addon';

export function nativeTwin<T>(name: string): T {
  const viaProbe = nativeModule<T>(name);
  if (viaProbe !== null) return viaProbe;
  if (backend.name === 'native') throw new Error(`the native addon has no module "${name}"`);
  const mod = requireAddon()[name] as T | undefined;
  if (mod === undefined) throw new Error(`the native addon has no module "${name}"`);
  return mod;
}
