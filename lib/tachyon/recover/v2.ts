/**
 * recover() of a version-2 file, from its journal only: the sample blocks
 * sealed by the last flush() its journal names, finalized with the writer's
 * own trailer (write/journal-file.ts), heap events included. The blocks are
 * read, copied and checked a piece at a time: a version-2 file recorded for
 * months is GBs, and memory stays a few MiB whatever its size.
 */
import { ErrorCode, ProfpackError, isProfpackError } from '../../errors';
import { AtomicOutput } from '../../output-file';
import { FileOutput, type FileBytes, type JournalState } from '../file/index';
import { verifyV2File } from './verify';
import { writeFromJournal } from '../write/index';
import { RegionPieces, copyRegion, measureRegion } from './region';
import { failure, openRanges, refuseWithoutJournal, unreadableResult, type RecoverResult } from './input';

/**
 * A version-2 file: the sample blocks sealed by the last flush() its journal
 * names, finalized from that checkpoint (write/journal-file.ts), so every
 * sample and heap event accepted before it. Blocks past it are dropped.
 */
export function recoverV2(
  inPath: string,
  outPath: string,
  onDisk: FileBytes,
  journal: JournalState | null,
  which: 'native' | 'js',
  cap: number,
): RecoverResult {
  if (journal === null || journal.checkpoints === 0) throw refuseWithoutJournal(inPath);
  if (journal.header.formatVersion !== 2 || journal.regionBytes > cap)
    throw new ProfpackError(`the journal beside ${inPath} names no version-2 region under the ${cap}-byte cap`, {
      code: ErrorCode.TACHYON_JOURNAL_CORRUPT,
      expected: `a version-2 journal naming at most maxDecompressedSize (${cap}) bytes`,
    });
  const zstd = journal.header.compression === 'zstd';
  const wanted = journal.regionBytes;
  // Copied a piece at a time, never held: an unended zstd frame decodes up to its first error (a block cut by a kill).
  const copyBlocks = (write: (bytes: Uint8Array) => void): number => {
    const copied = copyRegion(() => new RegionPieces(onDisk, zstd, wanted), wanted, write);
    if (copied < wanted)
      throw failure(`the journal's last flush names ${wanted} block bytes, ${copied} are on disk`, { path: inPath });
    return copied;
  };
  // What is on disk past the last flush (dropped): a zstd region is measured by a decompression pass, nothing kept.
  const onDiskBytes = zstd ? measureRegion(() => new RegionPieces(onDisk, zstd, cap)) : Math.min(onDisk.size, cap);
  const file = new AtomicOutput(outPath, ErrorCode.TACHYON_RECOVER_FAILED);
  let counts: { samples: number; threads: number };
  try {
    counts = writeFromJournal(new FileOutput(file.fd), copyBlocks, journal);
  } catch (err) {
    file.abort();
    throw isProfpackError(err) ? err : failure(`writing ${outPath} failed: ${(err as Error).message}`, {}, err);
  }
  try {
    // Read back as a reader would, by ranges (ProfileReader holds a version-2 file whole).
    const written = openRanges(file.writePath, 'recovered profile');
    try {
      const samples = verifyV2File(written, { backend: which });
      if (samples !== counts.samples)
        throw new Error(`${samples} samples replay where the journal counts ${counts.samples}`);
    } finally {
      written.close();
    }
  } catch (err) {
    file.abort();
    throw unreadableResult(err, outPath, true);
  }
  file.commit();
  return {
    source: 'journal',
    samples: counts.samples,
    threads: counts.threads,
    frames: journal.frameCount,
    droppedBytes: onDiskBytes - wanted,
    checkpoints: journal.checkpoints,
  };
}
