/**
 * The .cpuprofile byte scan (issue 39) against JSON.parse: whatever it takes, it reads as the reader's
 * JSON.parse path reads the same text (columnsOf of the parsed document); whatever JSON.parse refuses, it does
 * not take. Real V8 output (the outside profiles) is taken.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { columnsOf, type CpuColumns } from '../../../lib/formats/devtools/cpuprofile-columns';
import { scanCpuProfile, scanCpuProfileFile } from '../../../lib/formats/devtools/cpuprofile-scan';
import { repoRoot, sharedPath } from '../../support/environment';
import { profile, spread } from '../../support/cpuprofile-arbitrary';

const bytesOf = (text: string) => new TextEncoder().encode(text);
const dir = mkdtempSync(path.join(tmpdir(), 'profpack-scan-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What the reader's core uses of the columns, per node. */
function plain(c: CpuColumns) {
  return {
    nodes: Array.from(c.ids, (id, k) => {
      const cf = c.callFrames[c.frameOf[k]!]!;
      return {
        id,
        callFrame: [cf.functionName, cf.url, cf.lineNumber, cf.columnNumber, cf.scriptId],
        children: Array.from(c.children).slice(c.childStart[k], c.childStart[k + 1]),
        ticks: c.lineTicks?.[k],
      };
    }),
    samples: Array.from(c.samples),
    deltas: Array.from(c.deltas),
    startTime: c.startTime,
    endTime: c.endTime,
    meta: c.meta,
  };
}

/**
 * The scan of `text` from a file through windows of 1, 7 and 64 bytes to start (each item, node or number, read
 * again when the window ends inside it): the same as the scan of the bytes whole, taken or not.
 */
function windowsAgree(text: string, scanned: CpuColumns | undefined): void {
  const file = path.join(dir, 'profile.cpuprofile');
  writeFileSync(file, text);
  for (const windowBytes of [1, 7, 64]) {
    const windowed = scanCpuProfileFile(file, windowBytes);
    expect(windowed && plain(windowed), `window ${windowBytes}`).toEqual(scanned && plain(scanned));
  }
}

/** The scan of `text`, checked against JSON.parse's reading of it (and through windows); whether it was taken. */
function agrees(text: string): boolean {
  const scanned = scanCpuProfile(bytesOf(text));
  windowsAgree(text, scanned);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    expect(scanned).toBeUndefined();
    return false;
  }
  if (scanned === undefined) return false;
  expect(plain(scanned)).toEqual(plain(columnsOf(doc)));
  return true;
}

describe('the .cpuprofile byte scan', () => {
  it('takes real V8 profiles and reads them as JSON.parse does', () => {
    for (const file of [
      path.join(repoRoot, 'test', 'fixtures', 'outside', 'node-small.cpuprofile'),
      sharedPath('data', 'outside', 'node-cpu-prof.heavy.cpuprofile'),
    ])
      expect(agrees(readFileSync(file, 'utf8')), file).toBe(true);
  });

  it('reads any flat profile, compact or indented, as JSON.parse does', () => {
    fc.assert(
      fc.property(profile, fc.constantFrom(undefined, 2, '\t', ' \r\n'), (doc, space) => {
        let json = JSON.stringify(doc, null, space);
        // ' \r\n' is no indent JSON.stringify takes: whitespace around every punctuator instead.
        if (space === ' \r\n') json = spread(json);
        expect(agrees(json)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('takes nothing JSON.parse refuses, and agrees on what it takes, byte by byte damaged', () => {
    const seed = JSON.stringify({
      nodes: [
        { id: 1, callFrame: { functionName: '(root)', scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 } },
        {
          id: 2,
          callFrame: { functionName: 'f', scriptId: 3, url: 'file:///a.js', lineNumber: 1.5e1, columnNumber: 0 },
          positionTicks: [{ line: 3, ticks: 2 }],
        },
      ],
      startTime: 10,
      endTime: 20,
      samples: [2, 2, 1],
      timeDeltas: [1, -0, 2.25],
      $profpack: { version: 1, threads: [] },
    }).replace('"nodes":[{"id":1,', '"nodes":[{"id":1,"children":[2],');
    expect(agrees(seed)).toBe(true);
    const alphabet = '{}[]",:-+.eE0123456789 \\tnul\u00e9';
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(seed.length), fc.nat(2), fc.constantFrom(...alphabet)), {
          minLength: 1,
          maxLength: 3,
        }),
        (edits) => {
          let t = seed;
          for (const [at, kind, c] of edits) {
            const i = at % t.length;
            t =
              kind === 0
                ? t.slice(0, i) + t.slice(i + 1)
                : kind === 1
                  ? t.slice(0, i) + c + t.slice(i)
                  : t.slice(0, i) + c + t.slice(i + 1);
          }
          agrees(t);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('leaves other shapes to JSON.parse: the nested form, timestamps, a repeated key, a non-number id', () => {
    const cf = '{"functionName":"f","scriptId":"0","url":"","lineNumber":0,"columnNumber":0}';
    for (const t of [
      `{"head":{"functionName":"(root)","children":[]},"startTime":1,"endTime":2,"samples":[]}`,
      `{"nodes":[{"id":1,"callFrame":${cf}}],"startTime":1,"endTime":2,"samples":[1],"timestamps":[5]}`,
      `{"nodes":[{"id":1,"id":2,"callFrame":${cf}}],"samples":[],"timeDeltas":[]}`,
      `{"nodes":[{"id":"1","callFrame":${cf}}],"samples":[],"timeDeltas":[]}`,
      `{"nodes":[{"id":1,"callFrame":${cf}}],"samples":[],"samples":[],"timeDeltas":[]}`,
      `\ufeff{"nodes":[],"samples":[],"timeDeltas":[]}`,
    ]) {
      expect(scanCpuProfile(bytesOf(t)), t).toBeUndefined();
      windowsAgree(t, undefined);
    }
  });
});
