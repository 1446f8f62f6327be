/**
 * --compression for every command that writes Tachyon: with no flag, zstd where
 * this process writes it, else none with one warning line (an explicit `zstd`
 * still fails, coded, where it cannot be written).
 */
import { Option } from 'commander';
import { defaultCompression } from '../tachyon/index';

export type CompressionFlag = 'zstd' | 'none' | undefined;

export function compressionOption(what: string): Option {
  return new Option('--compression <kind>', `${what} (default: zstd, or none where zstd cannot be written)`).choices([
    'zstd',
    'none',
  ]);
}

/** The flag's compression, the default chosen (and its fallback said on stderr) when none was given. */
export function compressionOf(flag: CompressionFlag): 'zstd' | 'none' {
  return flag ?? defaultCompression((line) => void process.stderr.write(`profpack: warning: ${line}\n`));
}
