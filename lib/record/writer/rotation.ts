/**
 * File rotation for a long recording (an agent that ships a file a minute): the names of the files, and `keep`,
 * the bound on how many finished files stay on disk. The host (host.ts) decides when to rotate; every sample lands
 * in exactly one file because a harvest is ingested whole between rotations, and its sender never sends a tick
 * twice (lib/record/wire HarvestEncoder).
 */
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { removeFile } from '../../file-retry';
import { fsError } from '../../input';
import type { RotateOptions } from '../settings/index';

/** The rotating files' names, and the pruning that `keep` asks for. */
/** Rotating writers made by this process so far: each names its files apart from the others'. */
let rotationWriters = 0;

export class RotationFiles {
  private seq = 0;
  /** "" for the process's first rotating writer (the names it always had), "w2", "w3"… for the next. */
  private readonly writer = rotationWriters++ === 0 ? '' : `w${rotationWriters}`;
  private readonly finishedFiles: string[] = [];
  private readonly stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');

  constructor(private readonly options: Required<RotateOptions>) {
    try {
      mkdirSync(options.dir, { recursive: true });
    } catch (err) {
      throw fsError(err, options.dir, 'create the directory of the rotated files');
    }
  }

  /** The next file's path: DIR/PREFIX-<start, UTC>-<pid>-<NNNNN>.tach (sorts in recording order). */
  next(): string {
    const owner = this.writer === '' ? `${process.pid}` : `${process.pid}${this.writer}`;
    return path.join(
      this.options.dir,
      `${this.options.prefix}-${this.stamp}-${owner}-${String(this.seq++).padStart(5, '0')}.tach`,
    );
  }

  /** A file is final: the oldest finished files beyond `keep` are deleted. */
  finished(file: string): void {
    this.finishedFiles.push(file);
    while (this.finishedFiles.length > this.options.keep) removeFile(this.finishedFiles.shift()!);
  }
}
