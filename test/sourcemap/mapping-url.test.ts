/**
 * The script's last `//# sourceMappingURL=` comment, found in its bytes around each "sourceMappingURL=" (so that a
 * 9 MB bundle is not decoded and scanned whole), is the one the comment pattern finds over the whole decoded text:
 * line ends of every kind (LF, CR, CRLF, U+2028, U+2029), comments inside strings or after code, several comments,
 * and bytes that are not UTF-8.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { makeFrame } from '../../lib/profile/index';
import { SourceMapper } from '../../lib/sourcemap/index';
import { lastSourceMappingUrl } from '../../lib/sourcemap/mapper';

/** The pattern over the whole text, as the mapper searched before. */
function wholeText(bytes: Buffer): string | undefined {
  const text = bytes.toString('utf8');
  return [...text.matchAll(/^[ \t]*\/\/[#@][ \t]*sourceMappingURL=([^\s'"]+)[ \t]*$/gm)].at(-1)?.[1];
}

const PIECES = [
  '//# sourceMappingURL=a.js.map',
  '//@ sourceMappingURL=b.map',
  '// # sourceMappingURL=c.map',
  '//#sourceMappingURL=data:application/json,%7B%7D',
  'sourceMappingURL=',
  'sourceMappingURL=d.map',
  "'//# sourceMappingURL=e.map'",
  '"',
  '//#',
  '//',
  ' ',
  '\t',
  '\n',
  '\r',
  '\r\n',
  '\u2028',
  '\u2029',
  '\uFEFF',
  'x = 1;',
  'é',
  '\u{1F600}',
];

const piece = fc.oneof(
  fc.constantFrom(...PIECES).map((s) => Buffer.from(s, 'utf8')),
  // Not UTF-8: a lone lead byte, a stray continuation byte, a cut 4-byte sequence.
  fc.constantFrom(Buffer.of(0xc3), Buffer.of(0x80), Buffer.of(0xff), Buffer.of(0xf0, 0x9f, 0x98)),
);

describe('lastSourceMappingUrl', () => {
  it('finds what the comment pattern finds over the whole decoded text', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), (pieces) => {
        const bytes = Buffer.concat(pieces);
        expect(lastSourceMappingUrl(bytes)).toBe(wholeText(bytes));
      }),
      { numRuns: 3000 },
    );
  });

  it("from a script's last bytes: the whole text's answer, or null when those bytes cannot tell", () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), fc.nat(), (pieces, cut) => {
        const bytes = Buffer.concat(pieces);
        const tail = bytes.subarray(bytes.length === 0 ? 0 : cut % bytes.length);
        const fromTail = lastSourceMappingUrl(tail, false);
        if (fromTail !== null) expect(fromTail).toBe(wholeText(bytes));
        // All of the script given as its tail: its comment, unless that is on the first line (or there is none):
        // null, as the bytes before a tail could change its first line.
        const all = lastSourceMappingUrl(bytes, false);
        const afterFirstLine = bytes.subarray(bytes.toString('latin1').search(/[\n\r]|$/));
        expect(all).toBe(wholeText(afterFirstLine) ?? null);
      }),
      { numRuns: 3000 },
    );
    const script = Buffer.from('x = 1;\n//# sourceMappingURL=first.map\nf();\n//# sourceMappingURL=last.map\n', 'utf8');
    expect(lastSourceMappingUrl(script.subarray(script.indexOf('f();')), false)).toBe('last.map');
    expect(lastSourceMappingUrl(script.subarray(script.indexOf('\nf();')), false)).toBe('last.map');
    // The last comment's line cut at the tail's start, or none in the tail: the bytes before decide.
    expect(lastSourceMappingUrl(script.subarray(script.indexOf('# sourceMappingURL=last')), false)).toBeNull();
    expect(lastSourceMappingUrl(script.subarray(script.length - 1), false)).toBeNull();
  });

  it('the last comment counts; one inside a string or after code does not', () => {
    const script = (lines: string[]) => Buffer.from(lines.join('\n'), 'utf8');
    expect(lastSourceMappingUrl(script(['//# sourceMappingURL=one.map', 'f();', '//# sourceMappingURL=two.map']))).toBe(
      'two.map',
    );
    expect(lastSourceMappingUrl(script(['//# sourceMappingURL=one.map', "s = '//# sourceMappingURL=no.map';"]))).toBe(
      'one.map',
    );
    expect(lastSourceMappingUrl(script(['f(); //# sourceMappingURL=no.map']))).toBeUndefined();
    expect(lastSourceMappingUrl(script(['//# sourceMappingURL=crlf.map\r', '']))).toBe('crlf.map');
    expect(lastSourceMappingUrl(Buffer.alloc(0))).toBeUndefined();
  });

  it('reads a Uint8Array view of a larger buffer within its own bytes', () => {
    const whole = Buffer.from('//# sourceMappingURL=outside.map\n//# sourceMappingURL=inside.map\nx', 'utf8');
    const start = whole.indexOf('//# sourceMappingURL=inside');
    expect(lastSourceMappingUrl(new Uint8Array(whole.buffer, whole.byteOffset + start, 33))).toBe('inside.map');
    expect(lastSourceMappingUrl(whole.subarray(0, start))).toBe('outside.map');
  });
});

describe('SourceMapper on a script larger than the tail it reads first', () => {
  const dir = fs.mkdtempSync(path.join(tmpdir(), 'profpack-mapping-url-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  // 200 KB of lines between the code and the end: more than the 64 KiB read first.
  const filler = '// filler line\n'.repeat(200_000 / 15);
  const map = (source: string) => JSON.stringify({ version: 3, sources: [source], names: [], mappings: 'AAAA' });

  function mapped(name: string, text: string): string {
    const script = path.join(dir, `${name}.js`);
    fs.writeFileSync(script, text);
    const frame = makeFrame('f', pathToFileURL(script).href, 1, 1);
    return new SourceMapper().mapFrame(frame).filename;
  }

  it('the comment on the last line, the only one near the top, or one after a decoy near the end', () => {
    for (const at of ['tail', 'head', 'decoy']) fs.writeFileSync(path.join(dir, `${at}.map`), map(`${at}.ts`));
    expect(mapped('tail', `f();\n${filler}//# sourceMappingURL=tail.map\n`)).toBe(
      pathToFileURL(path.join(dir, 'tail.ts')).href,
    );
    expect(mapped('head', `f();\n//# sourceMappingURL=head.map\n${filler}`)).toBe(
      pathToFileURL(path.join(dir, 'head.ts')).href,
    );
    // "sourceMappingURL=" in a string near the end is no comment: the comment near the top counts.
    expect(mapped('decoy', `f();\n//# sourceMappingURL=decoy.map\n${filler}s = '//# sourceMappingURL=no.map';\n`)).toBe(
      pathToFileURL(path.join(dir, 'decoy.ts')).href,
    );
    // The last comment's line longer than the tail: read whole, it still counts.
    expect(mapped('long', `f();\n//# sourceMappingURL=tail.map${' '.repeat(100_000)}\n`)).toBe(
      pathToFileURL(path.join(dir, 'tail.ts')).href,
    );
    expect(mapped('none', `f();\n${filler}`)).toBe(pathToFileURL(path.join(dir, 'none.js')).href);
  });
});
