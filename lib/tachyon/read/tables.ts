/**
 * Frames resolved against the string table as CPython 3.15.2's reader hands them out, versions 1 and 2 alike
 * (the tables themselves are decoded by file/tables.ts and codec/tables.ts).
 */
import { NO_OPCODE } from '../format';
import { LOCATION_NOT_AVAILABLE, type DecodedFrameTable } from '../file/index';

/** One frame-table entry, resolved as CPython's reader hands it out: the model's Frame (lib/profile). */
import type { Frame } from '../../profile/index';
export type { Frame };

/**
 * The Frame object of entry i (strings resolved), or null when a string index is out of range (an error only if a
 * sample uses it).
 */
export function resolveFrame(table: DecodedFrameTable, strings: readonly string[], i: number): Frame | null {
  return frameFromStored(
    strings,
    table.filenameIndex[i]!,
    table.funcnameIndex[i]!,
    table.lineno[i]!,
    table.endLineno[i]!,
    table.column[i]!,
    table.endColumn[i]!,
    table.opcode[i]!,
  );
}

/**
 * A Frame from stored values (end positions absolute), as CPython's reader
 * builds it; null when a string index is out of range. Versions 1 and 2 alike.
 */
export function frameFromStored(
  strings: readonly string[],
  fi: number,
  fn: number,
  lineno: number,
  endLineno: number,
  column: number,
  endColumn: number,
  opcode: number,
): Frame | null {
  if (fi >= strings.length || fn >= strings.length) return null;
  const hasLocation = lineno !== LOCATION_NOT_AVAILABLE;
  // Not frozen (freezing 400 frames costs as much as opening the file): read-only by contract.
  return {
    filename: strings[fi]!,
    funcname: strings[fn]!,
    lineno: hasLocation ? lineno : null,
    endLineno: hasLocation ? endLineno : null,
    column: hasLocation ? column : null,
    endColumn: hasLocation ? endColumn : null,
    opcode: opcode === NO_OPCODE ? null : opcode,
  };
}
