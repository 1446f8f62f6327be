/**
 * External allocations: Buffer and ArrayBuffer backing stores the recorded
 * program allocates from JavaScript, sampled as V8 samples its heap (V8's
 * sampler sees the small JS object, never the store outside its heap). A
 * Poisson process over allocated bytes at V8's mean interval: a countdown
 * drawn from an exponential of mean `intervalBytes` is decremented by each
 * allocation's bytes, and the allocation that takes it to zero or below is
 * sampled (an allocation of s bytes with probability 1 − e^(−s/interval), as
 * V8 samples an object, so readers weigh both alike), then a new countdown is
 * drawn (the process is memoryless). An allocation not sampled costs the
 * wrapper's call and the decrement; a sampled one costs its stack
 * (Error.captureStackTrace with structured call sites) and a WeakRef.
 *
 * What is wrapped (install()): Buffer.alloc, allocUnsafe, allocUnsafeSlow,
 * from and concat (own properties of the Buffer constructor, replaced and put
 * back at dispose), and the ArrayBuffer, SharedArrayBuffer and typed-array
 * constructors through a Proxy whose construct trap passes new.target on, so
 * `instanceof`, subclasses (`class X extends ArrayBuffer`, whose super() goes
 * through the trap), statics and prototypes are the originals'; the
 * prototype's `constructor` is pointed at the proxy while it is installed so
 * that `x.constructor === ArrayBuffer` still holds. Node's own code uses its
 * primordials and is not seen, except where it calls Buffer's statics (its
 * stack then names the program's caller). Views over an existing buffer
 * (`Buffer.from(arrayBuffer)`, `new Uint8Array(buffer, offset)`) allocate
 * nothing and are not counted; typed arrays of 64 bytes or less live on V8's
 * heap (V8's own sampler counts them) and are not counted either.
 *
 * A pooled Buffer (allocUnsafe or from() below Buffer.poolSize / 2) is a
 * slice of an 8 KiB pool the allocating call may not have created: it is
 * weighed by its own length, and it is live while the Buffer object is (the
 * pool lives as long as any slice of it: a leaked slice can hold up to
 * poolSize that no sample stands for). Any other Buffer or view is live while
 * its ArrayBuffer is (a view kept alone keeps it).
 *
 * Frees: each poll checks the sampled objects' WeakRefs. A
 * FinalizationRegistry would tell without a walk, but its callbacks run in a
 * later task: the last poll, which collects the garbage first, would miss the
 * frees of its own GC, and so would every inspector poll (each one a full GC).
 * The walk is over the live samples only (external bytes over the interval).
 */
import type { CpuProfileCallFrame } from '../../../v8/index';
import type { HeapStackNumbers } from './stacks';
import { NO_STACK, type ExternalPoll } from '../../wire/index';

/** The deepest stack kept, as V8's sampler keeps (frames beyond are the outermost, cut). */
const STACK_LIMIT = 128;
/** Typed arrays up to this many bytes are stored on V8's heap (V8_TYPED_ARRAY_MAX_SIZE_IN_HEAP). */
const ON_HEAP_TYPED_ARRAY_BYTES = 64;

const TYPED_ARRAYS = [
  'Int8Array',
  'Uint8Array',
  'Uint8ClampedArray',
  'Int16Array',
  'Uint16Array',
  'Int32Array',
  'Uint32Array',
  'Float32Array',
  'Float64Array',
  'BigInt64Array',
  'BigUint64Array',
] as const;
const BUFFER_STATICS = ['alloc', 'allocUnsafe', 'allocUnsafeSlow', 'from', 'concat'] as const;

const NONE = new Uint32Array(0);
export const NO_EXTERNAL: ExternalPoll = {
  ordinals: NONE,
  sizes: NONE,
  stackIds: NONE,
  freed: NONE,
  collected: NONE,
};

/** A function on the stack (the wrapper, or the construct trap): captureStackTrace cuts it and what it called. */
type Caller = (...args: never[]) => unknown;
type Sampled = (result: object, bytes: number, api: string, caller: Caller) => void;

/** The sampler installed in this thread, if any: the wrappers are the thread's globals, one set at a time. */
let installed: ExternalSampler | null = null;

// The constructors as this module found them: once installed, the globals are the proxies, and `instanceof` a Proxy
// looks up Symbol.hasInstance and `prototype` through it (V8's slow path, on every typed array the thread makes).
const OriginalArrayBuffer = ArrayBuffer;
const OriginalSharedArrayBuffer = typeof SharedArrayBuffer === 'function' ? SharedArrayBuffer : undefined;
const isArrayBufferLike = (v: unknown): boolean =>
  v instanceof OriginalArrayBuffer ||
  (OriginalSharedArrayBuffer !== undefined && v instanceof OriginalSharedArrayBuffer);

export class ExternalSampler {
  private countdown: number;
  private nextOrdinal = 1;
  /** Sampled since the last poll. */
  private ordinals: number[] = [];
  private sizes: number[] = [];
  private stackIds: number[] = [];
  private refs: WeakRef<object>[] = [];
  /** Sent at an earlier poll and not yet seen gone. */
  private liveOrdinals: number[] = [];
  private liveRefs: WeakRef<object>[] = [];
  private busy = false;
  private readonly undo: (() => void)[] = [];
  /** Allocations sampled and objects seen freed, over the recording. */
  sampled = 0;
  freed = 0;

  constructor(
    private readonly intervalBytes: number,
    private readonly numbers: HeapStackNumbers,
    private readonly random: () => number = Math.random,
  ) {
    this.countdown = this.draw();
    if (installed !== null) return;
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- one set of wrappers per thread: its owner
    installed = this;
    this.install();
  }

  /** The events since the last call (ordinals ascending), the sampled objects now gone among them. */
  take(): ExternalPoll {
    if (this.ordinals.length === 0 && this.liveOrdinals.length === 0) return NO_EXTERNAL;
    const freed: number[] = [];
    let kept = 0;
    for (let i = 0; i < this.liveOrdinals.length; i++) {
      if (this.liveRefs[i]!.deref() === undefined) freed.push(this.liveOrdinals[i]!);
      else {
        this.liveOrdinals[kept] = this.liveOrdinals[i]!;
        this.liveRefs[kept++] = this.liveRefs[i]!;
      }
    }
    this.liveOrdinals.length = kept;
    this.liveRefs.length = kept;
    const collected: number[] = [];
    for (let i = 0; i < this.ordinals.length; i++) {
      const ref = this.refs[i]!;
      if (ref.deref() === undefined) collected.push(this.ordinals[i]!);
      else {
        this.liveOrdinals.push(this.ordinals[i]!);
        this.liveRefs.push(ref);
      }
    }
    const out: ExternalPoll = {
      ordinals: Uint32Array.from(this.ordinals),
      sizes: Uint32Array.from(this.sizes),
      stackIds: Uint32Array.from(this.stackIds),
      freed: Uint32Array.from(freed),
      collected: Uint32Array.from(collected),
    };
    this.freed += freed.length + collected.length;
    this.ordinals = [];
    this.sizes = [];
    this.stackIds = [];
    this.refs = [];
    return out;
  }

  /** Puts the originals back (only the sampler that installed the wrappers does). */
  dispose(): void {
    if (installed !== this) return;
    installed = null;
    for (let i = this.undo.length - 1; i >= 0; i--) this.undo[i]!();
    this.undo.length = 0;
  }

  /** Bytes to the next sample: an exponential draw of mean intervalBytes (at least 1). */
  private draw(): number {
    return Math.max(1, Math.round(-Math.log(1 - this.random()) * this.intervalBytes));
  }

  /** Counts `bytes` allocated; true when this allocation is the sampled one. */
  private counts(bytes: number): boolean {
    return (this.countdown -= bytes) <= 0;
  }

  private readonly sample: Sampled = (result, bytes, api, caller) => {
    this.countdown = this.draw();
    if (this.busy) return;
    this.busy = true;
    try {
      const stack = this.stackOf(api, caller);
      // The recorder's own Buffers (its pipe frames) are not the program's.
      if (stack === undefined) return;
      this.sampled++;
      this.ordinals.push(this.nextOrdinal++);
      this.sizes.push(Math.min(bytes, 0xffffffff));
      this.stackIds.push(stack < 0 ? NO_STACK : stack);
      this.refs.push(new WeakRef(result));
    } finally {
      this.busy = false;
    }
  };

  /**
   * The program's stack at the allocation, below it a frame naming the API: `(external) Buffer.alloc`; undefined
   * when a frame is the recorder's own (told from the call sites, before any frame or stack is numbered: the
   * recorder's Buffers are most of what a short program's sampler sees, and numbering them was work thrown away).
   */
  private stackOf(api: string, caller: Caller): number | undefined {
    const prepare = Error.prepareStackTrace;
    const limit = Error.stackTraceLimit;
    let sites: NodeJS.CallSite[];
    try {
      Error.prepareStackTrace = (_error, callSites): NodeJS.CallSite[] => callSites;
      Error.stackTraceLimit = STACK_LIMIT;
      const holder: { stack?: NodeJS.CallSite[] } = {};
      Error.captureStackTrace(holder, caller);
      sites = Array.isArray(holder.stack) ? holder.stack : [];
    } finally {
      Error.prepareStackTrace = prepare;
      Error.stackTraceLimit = limit;
    }
    for (const site of sites) if (this.numbers.isOwnUrl(site.getFileName() ?? site.getScriptNameOrSourceURL())) return;
    const frames: CpuProfileCallFrame[] = [];
    for (let i = sites.length - 1; i >= 0; i--) frames.push(callFrameOf(sites[i]!));
    frames.push({ functionName: `(external) ${api}`, scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 });
    return this.numbers.numberCallFrames(frames);
  }

  private install(): void {
    const counts = (bytes: number): boolean => this.counts(bytes);
    const sample = this.sample;
    const g = globalThis as Record<string, unknown>;
    /** Wrapped calls under way: an allocation inside another (concat's allocUnsafe) is not counted again. */
    let nested = 0;
    const wrapConstructor = (name: string, bytesOf: (args: unknown[], made: ArrayBufferLike) => number): void => {
      const original = g[name] as (new (...args: unknown[]) => object) | undefined;
      if (typeof original !== 'function') return;
      const proto = original.prototype as { constructor: unknown };
      const construct = (target: typeof original, args: unknown[], newTarget: unknown): object => {
        const made = Reflect.construct(target, args, (newTarget === proxy ? target : newTarget) as typeof target);
        if (nested > 0) return made;
        const bytes = bytesOf(args, made as ArrayBufferLike);
        // The stack is taken from the trap's caller: the program's `new`.
        if (bytes > 0 && counts(bytes)) sample(made, bytes, `new ${name}`, construct);
        return made;
      };
      const proxy: object = new Proxy(original, { construct: construct as ProxyHandler<typeof original>['construct'] });
      g[name] = proxy;
      proto.constructor = proxy;
      this.undo.push(() => {
        if (g[name] === proxy) g[name] = original;
        if (proto.constructor === proxy) proto.constructor = original;
      });
    };
    wrapConstructor('ArrayBuffer', (_args, made) => made.byteLength);
    wrapConstructor('SharedArrayBuffer', (_args, made) => made.byteLength);
    for (const name of TYPED_ARRAYS) {
      wrapConstructor(name, (args, made) => {
        // A view over a buffer allocates nothing; small arrays live on V8's heap.
        if (isArrayBufferLike(args[0])) return 0;
        const bytes = (made as unknown as ArrayBufferView).byteLength;
        return bytes > ON_HEAP_TYPED_ARRAY_BYTES ? bytes : 0;
      });
    }
    const B = Buffer as unknown as Record<string, unknown>;
    for (const name of BUFFER_STATICS) {
      const original = B[name] as (a?: unknown, b?: unknown, c?: unknown) => Buffer;
      if (typeof original !== 'function') continue;
      const api = `Buffer.${name}`;
      // Three parameters, every static's most (alloc, from), passed on as they came: no rest array and no apply
      // on each call (they tripled an unsampled Buffer.allocUnsafe(64)).
      const wrapper = {
        [name](this: unknown, a?: unknown, b?: unknown, c?: unknown): Buffer {
          let made: Buffer;
          nested++;
          try {
            made = original.call(this, a, b, c);
          } finally {
            nested--;
          }
          // Buffer.concat allocates through Buffer.allocUnsafe: one allocation, counted once (the outer call).
          if (nested > 0 || (name === 'from' && isArrayBufferLike(a))) return made;
          if (made.length > 0 && counts(made.length)) {
            // A pooled slice is live while its Buffer is; an own store while its ArrayBuffer is.
            const own = made.byteOffset === 0 && made.byteLength === made.buffer.byteLength;
            sample(own ? made.buffer : made, made.length, api, wrapper);
          }
          return made;
        },
      }[name]!;
      B[name] = wrapper;
      this.undo.push(() => {
        if (B[name] === wrapper) B[name] = original;
      });
    }
  }
}

/** A call site as V8's profilers name a frame: the function's own line and column (0-based), its script's URL. */
function callFrameOf(site: NodeJS.CallSite): CpuProfileCallFrame {
  const line = site.getEnclosingLineNumber?.() ?? site.getLineNumber();
  const column = site.getEnclosingColumnNumber?.() ?? site.getColumnNumber();
  return {
    functionName: site.getFunctionName() ?? '',
    scriptId: '0',
    url: site.getFileName() ?? site.getScriptNameOrSourceURL() ?? '',
    lineNumber: typeof line === 'number' ? line - 1 : -1,
    columnNumber: typeof column === 'number' ? column - 1 : -1,
  };
}
