// The string table as replay hands its strings out, against CPython 3.15.2's own reading of the same files:
// ASCII entries (short, at and past 512 bytes, with one- and two-byte length varints) beside UTF-8 and byte
// sequences that are not UTF-8 (CPython replaces them, errors="replace"), in every order. The shared vector
// s09_strings covers valid UTF-8 only (vectors.test.ts).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dumpProfile } from '../../../lib/tachyon/read/dump';
import { ProfileReader } from '../../../lib/tachyon/read/reader';
import { cpythonBeforeTests } from '../../support/cpython-dump';
import { cpythonInterpreter } from '../../support/cpython.mjs';
import { parseJsonExact, sharedPath } from '../../support/environment';
import { choices } from './reader-arbitraries';
import { encodeProfile, type TestFrame, type TestSample } from './reader-encoder';

/** ASCII markers the encoder writes, each replaced by bytes of the same length that are not UTF-8. */
const BROKEN: [string, number[]][] = [
  ['@@', [0xc3, 0x28]], // a lead byte without its continuation
  ['%%%', [0xff, 0xfe, 0x41]], // bytes no UTF-8 has
  ['^^', [0x80, 0x80]], // continuations alone
  ['~~~', [0xe2, 0x82, 0x41]], // a three-byte sequence cut short
];

const ASCII = ['', 'a', '<module>', 'x'.repeat(127), 'y'.repeat(128), 'z'.repeat(512), 'w'.repeat(513), '/p.py'];
const OTHER = ['café', '函数', 'emoji_🐍.py', 'bad@@name', 'only%%%', '^^', 'tail~~~', 'mixed_é@@'];

function replaceMarkers(bytes: Uint8Array): Uint8Array {
  const out = bytes.slice();
  for (const [marker, replacement] of BROKEN) {
    const m = new TextEncoder().encode(marker);
    for (let i = 0; i + m.length <= out.length; i++) {
      if (m.every((b, k) => out[i + k] === b)) out.set(replacement, i);
    }
  }
  return out;
}

/** A profile whose frames name every string (as filename and as funcname), the strings in `order`. */
function profile(strings: string[], seed: number): Uint8Array {
  const frames: TestFrame[] = strings.map((_, i) => ({
    filename: i,
    funcname: strings.length - 1 - i,
    lineno: i + 1,
    endLineno: i + 2,
    column: 0,
    endColumn: 4,
    opcode: 0,
  }));
  const samples: TestSample[] = [];
  for (let i = 0; i < frames.length; i++)
    samples.push({ threadId: 7n, interpreterId: 0, timestampUs: 1000n + BigInt(i), status: 0, stack: [i, 0] });
  return replaceMarkers(
    encodeProfile({
      littleEndian: seed % 2 === 0,
      compression: seed % 3 === 0 ? 1 : 0,
      zstdFrames: 1,
      startTimeUs: 1000n,
      intervalUs: 100n,
      strings,
      frames,
      samples,
      choice: choices(seed),
    }),
  );
}

describe('string table: ASCII beside other UTF-8 and invalid bytes, as CPython 3.15.2 reads it', () => {
  cpythonBeforeTests();
  const dir = mkdtempSync(path.join(tmpdir(), 'profpack-strings-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('every frame name, on every sample, in four orders of the table', () => {
    const orders = [
      [...ASCII, ...OTHER],
      [...OTHER, ...ASCII],
      ASCII.flatMap((a, i) => [a, OTHER[i]!]),
      OTHER.flatMap((o, i) => [o, ASCII[ASCII.length - 1 - i]!]),
    ];
    const files = orders.map((strings, i) => {
      const file = path.join(dir, `strings_${i}.bin`);
      writeFileSync(file, profile(strings, i));
      return file;
    });
    const list = path.join(dir, 'list.txt');
    writeFileSync(list, files.join('\n'));
    const run = spawnSync(
      cpythonInterpreter(),
      [path.join(__dirname, '..', '..', 'support', 'cpython_dump_many.py'), sharedPath('tools', 'cpython315'), list],
      { encoding: 'utf8', maxBuffer: 1 << 26 },
    );
    expect(run.status, run.stderr).toBe(0);
    const dumps = run.stdout.trim().split('\n');
    expect(dumps.length).toBe(files.length);
    files.forEach((file, i) => {
      const want = parseJsonExact(dumps[i]!) as { stage: string; samples: { frames: { filename: string }[] }[] };
      expect(want.stage).toBe('ok');
      const got = dumpProfile(file);
      expect(got.samples).toEqual(want.samples);
      // CPython replaced the broken bytes: the files do test what they mean to.
      expect(JSON.stringify(want.samples)).toContain('\ufffd');
      // Every string of the table is named by some frame, so CPython's frames give the whole table.
      const named = new Set(want.samples.flatMap((s) => s.frames.map((f) => f.filename)));
      const reader = ProfileReader.open(file);
      try {
        expect(new Set(reader.strings)).toEqual(named);
      } finally {
        reader.close();
      }
    });
  });
});
