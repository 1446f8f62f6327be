/**
 * Frames of compiled JavaScript read as their source: `dist/app.js:12:5`
 * becomes `src/app.ts:30:3` with the function named as the map names it.
 * The map is the one the script names in its last `sourceMappingURL`
 * comment (a file, or inline as a data: URL), else `app.js.map` beside it.
 * Decoding is @jridgewell/trace-mapping's. A script without a map, a frame
 * outside any mapping, or a map that cannot be read leaves the frame as it
 * was (the last says why once, in `warnings`).
 */
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as traceMapping from '@jridgewell/trace-mapping';
import type { Frame, ProfileSource } from '../profile/index';
import { ErrorCode, ProfpackError } from '../errors';

let traceMappingModule: typeof traceMapping | undefined;

/**
 * @jridgewell/trace-mapping, required when a first script has a map: `profpack record` loads this file to map the
 * frames it writes, and most programs have no map (~5 ms of CPU to load it and its codec for nothing).
 */
function decoder(): typeof traceMapping {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  traceMappingModule ??= require('@jridgewell/trace-mapping') as typeof traceMapping;
  return traceMappingModule;
}

/** A script larger than this is not read for its map comment. */
const MAX_FILE_BYTES = 256 * 1024 * 1024;

/**
 * A source map (a file, or an inline data: URL once decoded) larger than this is refused with a warning: a map is
 * parsed whole, at ~60 times its size (a 40 MB inline map took record's own process to 2.37 GB).
 */
export const MAX_MAP_BYTES = 16 * 1024 * 1024;

export class SourceMapper {
  /** Per script path: its map, or null when it has none. */
  private readonly maps = new Map<string, traceMapping.TraceMap | null>();
  /** Per script path as the profile names it: where it was found (null: nowhere). */
  private readonly located = new Map<string, string | null>();
  /** Maps that exist but could not be read, one line each. */
  readonly warnings: string[] = [];
  /** Called with each warning as it is found (a recording says it while the program runs). */
  onWarning: ((warning: string) => void) | undefined;

  /**
   * `root`: where the scripts are when the profile was recorded elsewhere
   * (`--source-maps DIR`): a script /srv/app/dist/app.js is looked for as
   * DIR/srv/app/dist/app.js, DIR/app/dist/app.js, DIR/dist/app.js, DIR/app.js.
   */
  constructor(private readonly root?: string) {
    if (root !== undefined && !(existsSync(root) && statSync(root).isDirectory())) {
      throw new ProfpackError(`--source-maps: ${root} is not a directory`, {
        code: ErrorCode.INVALID_ARGUMENT,
        expected: 'the directory the recorded scripts and their maps are in',
      });
    }
  }

  /** The frame at its source position, or the frame itself. */
  readonly mapFrame = (frame: Frame): Frame => {
    if (frame.lineno === null) return frame;
    const isUrl = frame.filename.startsWith('file://');
    let script: string;
    try {
      script = isUrl ? fileURLToPath(frame.filename) : frame.filename;
    } catch {
      return frame;
    }
    if (!path.isAbsolute(script)) return frame;
    const found = this.locate(script);
    const map = found === null ? null : this.mapOf(found);
    if (map === null) return frame;
    const decode = decoder();
    const at = decode.originalPositionFor(map, {
      line: frame.lineno,
      // No column (a hot line): the line's first mapping.
      column: frame.column === null ? 0 : frame.column - 1,
      bias: frame.column === null ? decode.LEAST_UPPER_BOUND : decode.GREATEST_LOWER_BOUND,
    });
    if (at.source === null || at.line === null) return frame;
    const source = at.source.startsWith('file://') ? fileURLToPath(at.source) : at.source;
    return {
      filename: isUrl && path.isAbsolute(source) ? pathToFileURL(source).href : source,
      funcname: at.name ?? frame.funcname,
      lineno: at.line,
      endLineno: null,
      column: frame.column === null || at.column === null ? null : at.column + 1,
      endColumn: null,
      opcode: frame.opcode,
    };
  };

  private locate(script: string): string | null {
    let hit = this.located.get(script);
    if (hit !== undefined) return hit;
    hit = null;
    if (this.root !== undefined) {
      const parts = script.split(path.sep).filter(Boolean);
      for (let k = 0; k < parts.length && hit === null; k++) {
        const candidate = path.join(this.root, ...parts.slice(k));
        if (isFile(candidate)) hit = candidate;
      }
    }
    if (hit === null && isFile(script)) hit = script;
    this.located.set(script, hit);
    return hit;
  }

  private mapOf(script: string): traceMapping.TraceMap | null {
    let map = this.maps.get(script);
    if (map !== undefined) return map;
    map = null;
    let where = script;
    try {
      const url = scriptMappingUrl(script);
      let json: string | null = null;
      if (url?.startsWith('data:')) {
        json = dataUrlText(url);
      } else if (url !== undefined) {
        where = path.resolve(path.dirname(script), decodeURIComponent(url));
        json = readMap(where)?.toString('utf8') ?? null;
      } else if (isFile(`${script}.map`)) {
        where = `${script}.map`;
        json = readMap(where)?.toString('utf8') ?? null;
      }
      // Sources resolve against the map's own location (an inline map's is its script's).
      if (json !== null) map = new (decoder().TraceMap)(json, pathToFileURL(where).href);
    } catch (err) {
      const which = where === script ? 'inline' : where;
      const warning = `source map of ${script} (${which}) not used: ${(err as Error).message}`;
      this.warnings.push(warning);
      this.onWarning?.(warning);
      map = null;
    }
    this.maps.set(script, map);
    return map;
  }
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/** Bytes of a script's end read first: its comment is where compilers put it, the last line. */
const TAIL_BYTES = 64 * 1024;

/**
 * The script's last `sourceMappingURL` comment (undefined: none, or a script too large to read), from its last
 * TAIL_BYTES when they tell, else from the whole script: TypeScript's _tsc.js (6 MB) was read whole for a comment
 * on its last line, ~6 ms of the CLI's CPU.
 */
function scriptMappingUrl(script: string): string | undefined {
  if (!isFile(script)) return undefined;
  const size = statSync(script).size;
  if (size > MAX_FILE_BYTES) return undefined;
  if (size > TAIL_BYTES) {
    const tail = Buffer.alloc(TAIL_BYTES);
    const fd = openSync(script, 'r');
    let got = 0;
    try {
      while (got < TAIL_BYTES) {
        const n = readSync(fd, tail, got, TAIL_BYTES - got, size - TAIL_BYTES + got);
        if (n === 0) break;
        got += n;
      }
    } finally {
      closeSync(fd);
    }
    // A script that changed size meanwhile is read whole, as before.
    const url = got === TAIL_BYTES ? lastSourceMappingUrl(tail, false) : null;
    if (url !== null) return url;
  }
  return lastSourceMappingUrl(readFileSync(script));
}

/** A map file's bytes (null: none there); one over MAX_MAP_BYTES is refused, never read. */
function readMap(file: string): Buffer | null {
  if (!isFile(file)) return null;
  tooLarge(statSync(file).size);
  return readFileSync(file);
}

function tooLarge(bytes: number): void {
  if (bytes > MAX_MAP_BYTES)
    throw new Error(`${bytes} bytes, over the ${MAX_MAP_BYTES / 1024 / 1024} MiB a source map may take`);
}

const MAPPING_URL = Buffer.from('sourceMappingURL=');
const MAPPING_COMMENT = /^[ \t]*\/\/[#@][ \t]*sourceMappingURL=([^\s'"]+)[ \t]*$/gm;
const LF = 0x0a;
const CR = 0x0d;

/**
 * The URL of the script's last `//# sourceMappingURL=` comment (the one that counts), as the comment pattern over
 * the whole text decoded would find it, but only the lines around each "sourceMappingURL=" are decoded, from the
 * end: decoding and scanning all of a 9 MB bundle (TypeScript's tsc.js, which has no map) cost `profpack record`
 * ~30 ms of CPU. The bytes searched and the line breaks (LF, CR) are ASCII, never inside a UTF-8 sequence; U+2028
 * and U+2029, also line ends to the pattern, stay inside a decoded piece, where the pattern sees them as before.
 * `whole` false: `bytes` are the script's last bytes only, and null says the answer needs the bytes before them
 * (no comment line found whole in them).
 */
export function lastSourceMappingUrl(bytes: Uint8Array, whole?: true): string | undefined;
export function lastSourceMappingUrl(bytes: Uint8Array, whole: false): string | null;
export function lastSourceMappingUrl(bytes: Uint8Array, whole = true): string | undefined | null {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const unknown = whole ? undefined : null;
  for (let at = text.lastIndexOf(MAPPING_URL); at >= 0;) {
    const start = Math.max(text.lastIndexOf(LF, at), text.lastIndexOf(CR, at)) + 1;
    // Of a tail, the first line may begin before the bytes given.
    if (start === 0 && !whole) return null;
    const end = Math.min(lineEnd(text, LF, at), lineEnd(text, CR, at));
    const url = [...text.toString('utf8', start, end).matchAll(MAPPING_COMMENT)].at(-1)?.[1];
    if (url !== undefined || start === 0) return url;
    at = text.lastIndexOf(MAPPING_URL, start - 1);
  }
  return unknown;
}

function lineEnd(text: Buffer, terminator: number, from: number): number {
  const at = text.indexOf(terminator, from);
  return at < 0 ? text.length : at;
}

function dataUrlText(url: string): string {
  const comma = url.indexOf(',');
  if (comma < 0) throw new Error('a data: URL without a comma');
  const head = url.slice(5, comma);
  const base64 = head.split(';').includes('base64');
  // Checked before decoding: base64 is 4 characters for 3 bytes, percent-encoding at least 1 for 1.
  const bytes = url.length - comma - 1;
  tooLarge(base64 ? Math.floor((bytes * 3) / 4) : bytes);
  const body = url.slice(comma + 1);
  return base64 ? Buffer.from(body, 'base64').toString('utf8') : decodeURIComponent(body);
}

/**
 * The source with every frame mapped (once each, as they appear: a
 * streaming source grows its frame table while its batches are read).
 */
export function withMappedFrames<S extends ProfileSource>(
  source: S,
  mapFrame: ((frame: Frame) => Frame) | undefined,
): S {
  if (mapFrame === undefined) return source;
  const mapped: Frame[] = [];
  const sync = (): Frame[] => {
    const from = source.frames;
    for (let i = mapped.length; i < from.length; i++) mapped.push(mapFrame(from[i]!));
    return mapped;
  };
  return Object.create(source, {
    frames: { get: sync, enumerable: true },
    batches: {
      value: function* () {
        for (const b of source.batches()) {
          sync();
          yield b;
        }
      },
    },
  }) as S;
}
