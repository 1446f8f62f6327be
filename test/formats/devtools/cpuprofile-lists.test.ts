/**
 * A counted list read again through its own window (ListNumbers) gives back the numbers the file holds, in order,
 * whatever the window's size and wherever items end in it; a window with exactly SLACK bytes left after an item
 * once spun without reading (a hang), so the sizes below put item ends on that boundary on purpose.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { CountedNumbers, ListNumbers, SLACK } from '../../../lib/formats/devtools/cpuprofile-lists';
import { closeInput, openInput } from '../../../lib/input';
import { ErrorCode, ProfpackError } from '../../../lib/errors';

const dir = mkdtempSync(path.join(tmpdir(), 'profpack-lists-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `prefix` then the list's text; the counted list as the scan leaves it (from: the first item's offset). */
function listFile(name: string, values: number[], prefix = '{"samples":['): { file: string; list: CountedNumbers } {
  const file = path.join(dir, name);
  writeFileSync(file, prefix + values.join(',') + ']}');
  const list = new CountedNumbers(undefined, undefined, Number.MAX_SAFE_INTEGER);
  for (const v of values) list.push(v);
  list.end();
  list.from = Buffer.byteLength(prefix);
  return { file, list };
}

/** The list read back with readMany in batches of `batch` (the last one shorter), then one read() if any left. */
function readBack(file: string, list: CountedNumbers, windowBytes: number, batch: number): number[] {
  const input = openInput(file);
  try {
    const again = new ListNumbers(list, input, windowBytes);
    const out = new Float64Array(list.length);
    const got: number[] = [];
    for (let left = list.length; left > 0;) {
      const n = Math.min(batch, left);
      again.readMany(out, n);
      for (let i = 0; i < n; i++) got.push(out[i]!);
      left -= n;
    }
    return got;
  } finally {
    closeInput(input);
  }
}

describe('ListNumbers', () => {
  it('reads one-digit items whose ends fall exactly SLACK bytes before the window end', () => {
    // Two bytes an item from the list's start: with an even window past SLACK, one item ends exactly at
    // windowBytes - SLACK.
    const values = Array.from({ length: 3 * SLACK }, (_, i) => i % 10);
    const { file, list } = listFile('digits.json', values);
    for (const windowBytes of [SLACK + 2, SLACK + 1000, SLACK + 1001, 2 * SLACK, 2 * SLACK + 2]) {
      expect(readBack(file, list, windowBytes, values.length)).toEqual(values);
      expect(readBack(file, list, windowBytes, 4097)).toEqual(values);
    }
  });

  it('reads any list through any window past SLACK, in any batches', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.integer({ min: 0, max: 9 }), fc.integer({ min: -1e6, max: 1e9 })), {
          minLength: 1,
          maxLength: 60_000,
        }),
        fc.integer({ min: 1, max: 4 * 1024 }),
        fc.integer({ min: 1, max: 70_000 }),
        (values, extra, batch) => {
          const { file, list } = listFile('any.json', values);
          expect(readBack(file, list, SLACK + extra, batch)).toEqual(values);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('says the file changed when the list is not what the count said', () => {
    const { file, list } = listFile('changed.json', [1, 2, 3, 4]);
    writeFileSync(file, '{"samples":[1,2,3]}');
    let error: unknown;
    try {
      readBack(file, list, SLACK + 16, 4);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ProfpackError);
    expect((error as ProfpackError).code).toBe(ErrorCode.TACHYON_FILE_CHANGED);
    expect((error as ProfpackError).offset).toBeGreaterThanOrEqual(12);
  });
});
