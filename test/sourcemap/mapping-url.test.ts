/**
 * The script's last `//# sourceMappingURL=` comment, found in its bytes around each "sourceMappingURL=" (so that a
 * 9 MB bundle is not decoded and scanned whole), is the one the comment pattern finds over the whole decoded text:
 * line ends of every kind (LF, CR, CRLF, U+2028, U+2029), comments inside strings or after code, several comments,
 * and bytes that are not UTF-8.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
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
