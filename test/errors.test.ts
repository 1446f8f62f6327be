/**
 * The C++ error codes (native/common/error_codes.h, the one table the native
 * sources take codes from) against lib/errors.ts's ErrorCode list: a code
 * misspelt in C++ would reach users as a code no JS caller can match.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../lib/errors';
import { repoRoot } from './support/environment';

const nativeDir = path.join(repoRoot, 'native');
const tablePath = path.join(nativeDir, 'common', 'error_codes.h');

function nativeSources(dir = nativeDir): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return nativeSources(full);
    return /\.(cc|h)$/.test(e.name) ? [full] : [];
  });
}

/** name -> code, as the header defines them. */
function table(): Map<string, string> {
  const text = fs.readFileSync(tablePath, 'utf8');
  const entries = [...text.matchAll(/^inline constexpr const char\* (k\w+) = "([^"]*)";$/gm)];
  const definitions = text.split('\n').filter((line) => line.startsWith('inline constexpr')).length;
  expect(entries.length, 'every definition in the header has the parsed shape').toBe(definitions);
  return new Map(entries.map((m) => [m[1]!, m[2]!]));
}

describe('native error codes', () => {
  const codes = table();
  const known = new Set<string>(Object.values(ErrorCode));

  it('every code of the C++ table is in lib/errors.ts ErrorCode', () => {
    expect(codes.size).toBeGreaterThanOrEqual(40);
    const unknown = [...codes].filter(([, code]) => !known.has(code));
    expect(unknown).toEqual([]);
  });

  it('each constant is named after its code and no code is listed twice', () => {
    for (const [name, code] of codes) {
      const words = code.replace(/^ERR_/, '').split('_');
      expect(name).toBe('k' + words.map((w) => w[0] + w.slice(1).toLowerCase()).join(''));
    }
    expect(new Set(codes.values()).size).toBe(codes.size);
  });

  it('no other native source spells a code as a string literal, and every codes:: name it uses is in the table', () => {
    const literals: string[] = [];
    const undefinedNames: string[] = [];
    for (const file of nativeSources()) {
      if (file === tablePath) continue;
      const text = fs.readFileSync(file, 'utf8');
      const rel = path.relative(repoRoot, file);
      for (const m of text.matchAll(/"ERR_[A-Z0-9_]*"/g)) literals.push(`${rel}: ${m[0]}`);
      for (const m of text.matchAll(/\bcodes::(k\w+)/g)) if (!codes.has(m[1]!)) undefinedNames.push(`${rel}: ${m[1]}`);
    }
    expect(literals).toEqual([]);
    expect(undefinedNames).toEqual([]);
  });
});
