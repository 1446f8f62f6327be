/**
 * The one capability probe of the heap sampler: V8's sampling heap profiler
 * through V8's C++ API (native/heap/, no forced GC at a poll) when
 * PROFPACK_BACKEND is not `js` and that addon loads for this Node, else
 * through `node:inspector` (its JS twin: every poll a full GC, ../heap-recorder.ts).
 *
 * The addon uses V8's own API, which is not ABI-stable, so it is built per
 * Node major (binding.gyp's profpack_heap target, a `.v8heap` file beside the
 * N-API addon, which node-gyp-build never picks up; the npm package carries
 * prebuilds/linux-<arch>/heap-node<major>.v8heap for the majors
 * scripts/prebuild-heap.sh builds): a build for another Node fails to load
 * here, and the inspector path stays, its reason naming the file that did
 * not load or the prebuild that is missing. Unlike the main
 * addon, PROFPACK_BACKEND=native does not make its absence an error: it is an
 * optimisation of one path, missing on Windows and on Nodes without a build.
 * PROFPACK_HEAP_SAMPLER=inspector|native forces one path (benches, diagnosis;
 * native then fails if the addon does not load: startRecording throws, and
 * `profpack record` exits 2 with the reason before the program runs), `auto`
 * or unset chooses. PROFPACK_HEAP_ADDON=FILE loads the addon from FILE only.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { packageRoot } from '../../../backend';
import { ErrorCode, ProfpackError } from '../../../errors';

export type HeapSamplerKind = 'native' | 'inspector';

/** One poll of V8's sampling heap profile, flat: nodes in pre-order (a parent before its children), then samples. */
export interface FlatHeapProfile {
  nodeIds: Uint32Array;
  /** NO_PARENT for the root, V8's "(root)". */
  parentIds: Uint32Array;
  /** Into `strings`. */
  nameIds: Uint32Array;
  urlIds: Uint32Array;
  scriptIds: Int32Array;
  /** 0-based, -1 unknown (as the inspector gives them). */
  lines: Int32Array;
  columns: Int32Array;
  strings: string[];
  /** V8's sample ids (the inspector's ordinals), each sample's size in bytes and its allocation node. */
  ordinals: Uint32Array;
  sizes: Uint32Array;
  sampleNodes: Uint32Array;
  /**
   * Sampled objects born since the previous poll and collected before this one, as a GC prologue saw them
   * (native/heap/, start's captureAtGc): each with its size and allocation node (among the nodes above).
   */
  collectedOrdinals?: Uint32Array;
  collectedSizes?: Uint32Array;
  collectedNodes?: Uint32Array;
}

export const NO_PARENT = 0xffffffff;

/** The addon's functions (native/heap/heap_sampler.cc). */
export interface NativeHeapSampler {
  /**
   * False when V8's sampling heap profiler is already running in this isolate. `captureAtGc`: keep the samples of
   * objects that die before the next poll (FlatHeapProfile's collected columns).
   */
  start(intervalBytes: number, captureAtGc?: boolean): boolean;
  /** Undefined when not sampling. */
  poll(): FlatHeapProfile | undefined;
  stop(): void;
  /** The Node major its headers were. */
  nodeMajor: number;
}

export interface HeapSamplerChoice {
  kind: HeapSamplerKind;
  /** Why the inspector path is in use (undefined with the native sampler). */
  reason: string | undefined;
  addon: NativeHeapSampler | undefined;
}

/** Where a build of the addon may be, under the package root: a source build's, then this Node major's prebuild. */
function candidates(): { file: string; prebuilt: boolean; label: string }[] {
  const major = process.versions.node.split('.')[0];
  return [
    { file: path.join('build', 'Release', 'profpack_heap.v8heap'), prebuilt: false, label: 'the source build' },
    {
      file: path.join('prebuilds', `${process.platform}-${process.arch}`, `heap-node${major}.v8heap`),
      prebuilt: true,
      label: 'the prebuilt',
    },
  ];
}

/**
 * The choice for these environment variables (heapSamplerChoice() keeps this process's), looking for the addon
 * under `root` (the package's own folder; tests point it at a copy).
 */
export function probeHeapSampler(env: NodeJS.ProcessEnv = process.env, root: string = packageRoot): HeapSamplerChoice {
  const forced = (env.PROFPACK_HEAP_SAMPLER ?? '').trim().toLowerCase();
  if (forced !== '' && forced !== 'auto' && forced !== 'native' && forced !== 'inspector')
    throw new ProfpackError(`PROFPACK_HEAP_SAMPLER must be "native", "inspector" or "auto", not "${forced}"`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: 'native | inspector | auto',
    });
  if (forced === 'inspector')
    return { kind: 'inspector', reason: 'forced by PROFPACK_HEAP_SAMPLER=inspector', addon: undefined };
  const backend = (env.PROFPACK_BACKEND ?? '').trim().toLowerCase();
  if (backend === 'js' && forced !== 'native')
    return { kind: 'inspector', reason: 'forced by PROFPACK_BACKEND=js', addon: undefined };
  const reasons: string[] = [];
  // PROFPACK_HEAP_ADDON: the one file to load (a build kept elsewhere; tests point it at one that does not load).
  const given = (env.PROFPACK_HEAP_ADDON ?? '').trim();
  if (given !== '' && !fs.existsSync(given)) reasons.push(`PROFPACK_HEAP_ADDON names ${given}, which does not exist`);
  const places =
    given !== '' ? [{ file: path.resolve(given), prebuilt: false, label: 'PROFPACK_HEAP_ADDON' }] : candidates();
  for (const { file, prebuilt, label } of places) {
    if (!fs.existsSync(path.resolve(root, file))) {
      // A missing source build is the usual install (no compiler); a missing prebuild means none for this Node.
      if (prebuilt) reasons.push(`no prebuilt heap sampler for Node ${process.versions.node} (no ${file})`);
      continue;
    }
    try {
      const mod = { exports: {} as NativeHeapSampler };
      process.dlopen(mod, path.resolve(root, file));
      return { kind: 'native', reason: undefined, addon: mod.exports };
    } catch (err) {
      // E.g. a build for another Node major: Node's message names both module versions over several lines.
      const message = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim();
      reasons.push(`${label} ${file} exists but did not load: ${message}`);
    }
  }
  const reason = reasons.join('; ');
  if (forced === 'native')
    throw new ProfpackError(`PROFPACK_HEAP_SAMPLER=native but the heap sampler addon did not load: ${reason}`, {
      code: ErrorCode.NATIVE_UNAVAILABLE,
    });
  return { kind: 'inspector', reason, addon: undefined };
}

let choice: HeapSamplerChoice | undefined;

/** The heap sampler this thread uses, decided at its first call. */
export function heapSamplerChoice(): HeapSamplerChoice {
  choice ??= probeHeapSampler();
  return choice;
}
