/**
 * zstd without the zstd-napi addon, behind the part of its context API that
 * profpack uses (binding.ts picks it). Decoding: Node's built-in zstd
 * (node:zlib, Node >= 22.15) or else fzstd (pure JS). Encoding: Node's
 * built-in zstd only.
 *
 * Neither has zstd's resumable buffer-in/buffer-out calls, so streams are cut
 * at frame boundaries: the decoder gathers input until a frame is complete and
 * decodes that frame in one piece (at most FRAME_OUTPUT_LIMIT bytes); the
 * encoder makes every non-empty compress call one whole frame. Tachyon and
 * CPython readers accept concatenated frames, and each frame, like CPython's,
 * declares no content size.
 */
import type * as fzstd from 'fzstd';
import { ErrorCode, ProfpackError } from '../../../errors';
import { ZSTD_MAX_DECOMPRESSED } from '../../format';

/** The subset of zstd-napi's binding (zstd-napi/binding) that profpack calls. */
export interface ZstdDCtx {
  decompressStream(out: Uint8Array, input: Uint8Array): [number, number, number];
  reset(directive: number): void;
}
export interface ZstdCCtx {
  setParameter(param: number, value: number): void;
  compressStream2(out: Uint8Array, input: Uint8Array, directive: number): [number, number, number];
  compress(out: Uint8Array, data: Uint8Array, level: number): number;
  reset(directive: number): void;
}
export interface ZstdApi {
  DCtx: new () => ZstdDCtx;
  CCtx: new () => ZstdCCtx;
  getFrameContentSize(frame: Uint8Array): number | null;
  compressBound(size: number): number;
  cStreamOutSize(): number;
  CParameter: { compressionLevel: number };
  EndDirective: { continue: number; flush: number; end: number };
  ResetDirective: { sessionOnly: number; sessionAndParameters: number };
}

/** Which decoder the fallback uses: Node's own zstd where it has one. */
export type FallbackDecoder = 'node' | 'fzstd';

type NodeZstdFn = (
  data: Uint8Array,
  options?: { params?: Record<number, number>; maxOutputLength?: number },
) => Uint8Array;
// Typed here: the project's @types/node is Node 20's, which has no zstd.
interface NodeZlib {
  zstdCompressSync?: NodeZstdFn;
  zstdDecompressSync?: NodeZstdFn;
  constants: Record<string, number>;
}

let nodeZlib: NodeZlib | undefined;
let fzstdModule: typeof fzstd | undefined;
let nodeZstdFns: { compress: NodeZstdFn; decompress: NodeZstdFn } | null | undefined;

/**
 * Node's zstd functions, when this Node has them (22.15 and later). node:zlib and fzstd are required on first use:
 * this module loads with every zstd path, and `profpack record`, writing through zstd-napi, needs neither.
 */
export function nodeZstd(): { compress: NodeZstdFn; decompress: NodeZstdFn } | null {
  if (nodeZstdFns === undefined) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    nodeZlib = require('node:zlib') as NodeZlib;
    nodeZstdFns =
      nodeZlib.zstdCompressSync && nodeZlib.zstdDecompressSync
        ? { compress: nodeZlib.zstdCompressSync, decompress: nodeZlib.zstdDecompressSync }
        : null;
  }
  return nodeZstdFns;
}

/** One frame's output is decoded at once: no more than CPython accepts for a whole region (1 GiB). */
const FRAME_OUTPUT_LIMIT = ZSTD_MAX_DECOMPRESSED;

const ZSTD_MAGIC = 0xfd2fb528;
const BLOCK_MAX = 128 << 10;

function u32le(b: Uint8Array, at: number): number {
  return (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
}

function isSkippable(magic: number): boolean {
  return magic >>> 4 === 0x184d2a5;
}

interface FrameHeader {
  headerSize: number;
  contentSize: number | null;
  checksum: boolean;
}

/** The frame header at b[0..): null when more bytes are needed; throws on a bad magic or reserved bit. */
function frameHeader(b: Uint8Array): FrameHeader | null {
  if (b.length < 5) return null;
  const magic = u32le(b, 0);
  if (isSkippable(magic)) return { headerSize: 8, contentSize: 0, checksum: false };
  if (magic !== ZSTD_MAGIC) throw new Error('Unknown frame descriptor');
  const fhd = b[4]!;
  if (fhd & 0x08) throw new Error('Unsupported frame parameter');
  const single = (fhd >> 5) & 1;
  const fcsSize = [single, 2, 4, 8][fhd >> 6]!;
  const headerSize = 5 + (single ? 0 : 1) + [0, 1, 2, 4][fhd & 3]! + fcsSize;
  if (b.length < headerSize) return null;
  let contentSize: number | null = null;
  const at = headerSize - fcsSize;
  if (fcsSize === 1) contentSize = b[at]!;
  else if (fcsSize === 2) contentSize = (b[at]! | (b[at + 1]! << 8)) + 256;
  else if (fcsSize === 4) contentSize = u32le(b, at);
  else if (fcsSize === 8) contentSize = u32le(b, at) + u32le(b, at + 4) * 2 ** 32;
  return { headerSize, contentSize, checksum: (fhd & 0x04) !== 0 };
}

/** The length of the complete frame at b[0..), or null when b holds only part of it. */
function frameLength(b: Uint8Array): number | null {
  const header = frameHeader(b);
  if (header === null) return null;
  if (isSkippable(u32le(b, 0))) return b.length < 8 ? null : 8 + u32le(b, 4);
  let pos = header.headerSize;
  for (;;) {
    if (b.length < pos + 3) return null;
    const h = b[pos]! | (b[pos + 1]! << 8) | (b[pos + 2]! << 16);
    const type = (h >> 1) & 3;
    const size = h >>> 3;
    if (type === 3) throw new Error('Corrupted block detected');
    if (size > BLOCK_MAX) throw new Error('Block size too large');
    pos += 3 + (type === 1 ? 1 : size);
    if (h & 1) break;
  }
  pos += header.checksum ? 4 : 0;
  return b.length < pos ? null : pos;
}

function decodeFrame(frame: Uint8Array, decoder: FallbackDecoder): Uint8Array {
  if (isSkippable(u32le(frame, 0))) return new Uint8Array(0);
  const node = decoder === 'node' ? nodeZstd() : null;
  if (node !== null) return node.decompress(frame, { maxOutputLength: FRAME_OUTPUT_LIMIT });
  const parts: Uint8Array[] = [];
  let total = 0;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  fzstdModule ??= require('fzstd') as typeof fzstd;
  const stream = new fzstdModule.Decompress((chunk) => {
    total += chunk.length;
    if (total > FRAME_OUTPUT_LIMIT) throw new Error(`Frame decompresses to more than ${FRAME_OUTPUT_LIMIT} bytes`);
    parts.push(chunk);
  });
  stream.push(frame, true);
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b.slice();
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** ZSTD_decompressStream's contract ([hint, produced, consumed]; hint 0 once a frame is done and flushed). */
class FrameDCtx implements ZstdDCtx {
  private pending: Uint8Array = new Uint8Array(0);
  private output: Uint8Array = new Uint8Array(0);
  private outputPos = 0;

  constructor(private readonly decoder: FallbackDecoder) {}

  decompressStream(out: Uint8Array, input: Uint8Array): [number, number, number] {
    // Takes all input at once; frames come off the front as they complete.
    if (input.length > 0) this.pending = concat(this.pending, input);
    let produced = 0;
    for (;;) {
      const left = this.output.length - this.outputPos;
      if (left > 0) {
        const n = Math.min(left, out.length - produced);
        out.set(this.output.subarray(this.outputPos, this.outputPos + n), produced);
        this.outputPos += n;
        produced += n;
        if (produced === out.length) break;
      }
      const length = this.pending.length > 0 ? frameLength(this.pending) : null;
      if (length === null) break;
      this.output = decodeFrame(this.pending.subarray(0, length), this.decoder);
      this.outputPos = 0;
      this.pending = this.pending.slice(length);
    }
    const more = this.output.length - this.outputPos > 0 || this.pending.length > 0;
    return [more ? 1 : 0, produced, input.length];
  }

  reset(): void {
    this.pending = new Uint8Array(0);
    this.output = new Uint8Array(0);
    this.outputPos = 0;
  }
}

/** Why zstd cannot be written here: the fallback's line (binding.ts) and an explicit request's error. */
export function noZstdReason(): string {
  return (
    `writing zstd needs the zstd-napi addon or Node >= 22.15 (built-in zstd); ` +
    `this is Node ${process.versions.node} without zstd-napi`
  );
}

function nodeCompress(data: Uint8Array, level: number): Uint8Array {
  const compress = nodeZstd()!.compress;
  const params = {
    [nodeZlib!.constants.ZSTD_c_compressionLevel!]: level,
    [nodeZlib!.constants.ZSTD_c_contentSizeFlag!]: 0,
  };
  return compress(data, { params });
}

/** ZSTD_compressStream2's contract, one frame per call that brings input. */
class FrameCCtx implements ZstdCCtx {
  private level = 3;
  private output: Uint8Array = new Uint8Array(0);
  private outputPos = 0;
  /** A frame was started since the last end (an end with none writes one empty frame). */
  private open = false;

  constructor() {
    if (!nodeZstd()) {
      throw new ProfpackError(`${noZstdReason()}: write with compression: 'none'`, {
        code: ErrorCode.NATIVE_UNAVAILABLE,
        expected: 'zstd-napi, or Node >= 22.15',
      });
    }
  }

  setParameter(param: number, value: number): void {
    if (param === FALLBACK_API.CParameter.compressionLevel) this.level = value;
  }

  compressStream2(out: Uint8Array, input: Uint8Array, directive: number): [number, number, number] {
    // Input is taken only once the previous frame is out, so output keeps the order of input.
    let consumed = 0;
    if (this.output.length === this.outputPos) {
      if (input.length > 0) {
        this.output = nodeCompress(input, this.level);
        this.outputPos = 0;
        this.open = true;
        consumed = input.length;
      } else if (directive === FALLBACK_API.EndDirective.end && !this.open) {
        this.output = nodeCompress(new Uint8Array(0), this.level);
        this.outputPos = 0;
        this.open = true;
      }
    }
    const n = Math.min(out.length, this.output.length - this.outputPos);
    out.set(this.output.subarray(this.outputPos, this.outputPos + n));
    this.outputPos += n;
    const remaining = this.output.length - this.outputPos;
    if (remaining === 0 && directive === FALLBACK_API.EndDirective.end) this.open = false;
    return [remaining, n, consumed];
  }

  /** Abandons any frame in progress; with parameters, back to the default level (as ZSTD_CCtx_reset). */
  reset(directive: number): void {
    this.output = new Uint8Array(0);
    this.outputPos = 0;
    this.open = false;
    if (directive === FALLBACK_API.ResetDirective.sessionAndParameters) this.level = 3;
  }

  compress(out: Uint8Array, data: Uint8Array, level: number): number {
    const frame = nodeCompress(data, level);
    if (frame.length > out.length) throw new Error('Destination buffer is too small');
    out.set(frame);
    return frame.length;
  }
}

function compressBound(size: number): number {
  // ZSTD_COMPRESSBOUND from zstd.h.
  return size + (size >>> 8) + (size < BLOCK_MAX ? (BLOCK_MAX - size) >>> 11 : 0);
}

const FALLBACK_API = {
  CParameter: { compressionLevel: 100 },
  EndDirective: { continue: 0, flush: 1, end: 2 },
  ResetDirective: { sessionOnly: 1, sessionAndParameters: 3 },
};

/** The fallback API with `decoder` for reading. */
export function fallbackZstd(decoder: FallbackDecoder): ZstdApi {
  return {
    ...FALLBACK_API,
    DCtx: class extends FrameDCtx {
      constructor() {
        super(decoder);
      }
    },
    CCtx: FrameCCtx,
    getFrameContentSize(frame: Uint8Array): number | null {
      const header = frameHeader(frame);
      if (header === null) throw new Error('Src size is incorrect');
      return header.contentSize;
    },
    compressBound,
    // ZSTD_CStreamOutSize(): one block's bound plus a block header and a checksum.
    cStreamOutSize: () => compressBound(BLOCK_MAX) + 3 + 4,
  };
}
