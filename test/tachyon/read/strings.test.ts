// readStringTable: a version-1 file's strings without its sample region, against CPython 3.15.2's own reading of
// every shared vector (*.expected.json: the string count, and every frame's filename and funcname among them).
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readStringTable } from '../../../lib/tachyon/read/index';
import { ProfileReader } from '../../../lib/tachyon/read/reader';
import { isProfpackError } from '../../../lib/errors';
import { readJsonExact, sharedPath } from '../../support/environment';

const dir = sharedPath('vectors', 'tachyon');
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bin'))
  .sort();

interface Expected {
  accepted: boolean;
  stage: string;
  info: { string_count: number } | null;
  samples: { frames: { filename: string; funcname: string }[] }[];
}

/** ProfileReader.open's error code, or null when it opens. */
function openCode(file: string): string | null {
  try {
    ProfileReader.open(file).close();
    return null;
  } catch (err) {
    if (!isProfpackError(err)) throw err;
    return err.code;
  }
}

describe('readStringTable', () => {
  it('finds the vectors', () => {
    expect(files.length).toBeGreaterThanOrEqual(70);
  });
  for (const name of files) {
    it(name, () => {
      const file = `${dir}/${name}`;
      const expected = readJsonExact(file.replace(/\.bin$/, '.expected.json')) as Expected;
      if (expected.stage !== 'open') {
        const strings = readStringTable(file)!;
        expect(strings.length).toBe(expected.info!.string_count);
        const set = new Set(strings);
        for (const s of expected.samples)
          for (const f of s.frames) {
            if (!set.has(f.filename)) expect(strings).toContain(f.filename);
            if (!set.has(f.funcname)) expect(strings).toContain(f.funcname);
          }
        return;
      }
      // Refused at open: the same refusal, except for the sample region's zstd check, which is not made here.
      const code = openCode(file);
      let own: string | null = null;
      try {
        // null: a version-2 header, which the caller opens with ProfileReader (its refusal is `code`).
        if (readStringTable(file) === null) expect(readFileSync(file).readUInt32LE(4)).toBe(2);
      } catch (err) {
        if (!isProfpackError(err)) throw err;
        own = err.code;
      }
      if (own === null && readStringTable(file) === null) return;
      if (code?.startsWith('ERR_TACHYON_ZSTD')) expect(own === null || own.startsWith('ERR_TACHYON_')).toBe(true);
      else expect(own).toBe(code);
    });
  }
});
