/** The addon's Stream VByte functions (native/svb/svb_napi.cc), or null under the JS twin. */
import { nativeModule } from '../backend';
import type { SvbCodec } from './modes';

export type KernelLevel = 'scalar' | 'sse41' | 'avx2' | 'neon';

export interface SvbNative extends SvbCodec {
  /** The SIMD level whose kernels this process uses. */
  kernelLevel(): KernelLevel;
  /** The levels this CPU can run, lowest first. */
  kernelLevels(): KernelLevel[];
  /** Test hook: switches this process to `level` (refused if the CPU lacks it); returns the previous level. */
  setKernelLevel(level: string): KernelLevel;
  /** Test hook: the PROFPACK_SIMD rules for the given CPU. */
  resolveSimdLevel(
    requested: string,
    cpu: { sse41: boolean; avx2: boolean; neon?: boolean },
  ): { level?: KernelLevel; error?: string };
}

export const svbNative = nativeModule<SvbNative>('svb');
