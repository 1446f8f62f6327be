/**
 * A version-1 file's string table without its sample region: what a caller
 * needs to know who recorded a file (lib/recorded-by.ts). Opening a reader
 * checks a zstd region whole, as CPython does; the CLI's heap-only check
 * then paid that twice per conversion (once here, once in the command).
 */
import { readSync } from 'node:fs';
import { ErrorCode } from '../../errors';
import { closeInput, fsError, openInput, readInputHead } from '../../input';
import { FORMAT_VERSION_2 } from '../format';
import { checkTableCounts, parseLayout, parseStringTable, tachyonVersion, type FileBytes } from '../file/index';

/**
 * The strings of the Tachyon file at `path`, after open's header, footer and table checks (the same errors); null
 * for a version-2 file, whose strings are in its decoded sections (open it with ProfileReader).
 */
export function readStringTable(path: string): readonly string[] | null {
  if (tachyonVersion(readInputHead(path, 8, ErrorCode.TACHYON_IO)) === FORMAT_VERSION_2) return null;
  const input = openInput(path, ErrorCode.TACHYON_IO);
  try {
    const read = (start: number, end: number): Uint8Array => {
      const bytes = new Uint8Array(Math.max(0, end - start));
      let done = 0;
      while (done < bytes.length) {
        let n: number;
        try {
          n = readSync(input.fd, bytes, done, bytes.length - done, start + done);
        } catch (err) {
          throw fsError(err, path, 'read', ErrorCode.TACHYON_IO);
        }
        if (n === 0) break; // shorter than at open: the layout's checks refuse what is missing
        done += n;
      }
      return bytes.subarray(0, done);
    };
    const source: FileBytes = { size: input.size, read };
    const layout = parseLayout(source);
    checkTableCounts(layout);
    const at = layout.stringTableOffset;
    return parseStringTable(source.read(at, layout.fileSize), at, at, layout.info.stringCount, layout.fileSize);
  } finally {
    closeInput(input);
  }
}
