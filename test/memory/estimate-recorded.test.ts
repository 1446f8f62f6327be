// test tier: slow (recorded live sets through each heap sampler, ~16 s)
/**
 * The live-bytes estimate of a recording, end to end: `profpack record --heap` of a program keeping a live set
 * of known size, then `top --sample-type inuse_space`, through each heap sampler. Both hand the file V8's raw
 * sample sizes (the inspector's pre-scaled ones undone), so the reader's one 1/p scaling is the estimate: it
 * read ~1.3× at 4 KiB while sizes were scaled twice. Bounds as in estimate.test.ts: 5/sqrt(n) plus V8's
 * rounding of the inspector's count.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildForTests } from '../support/build';

const { dir, cli } = buildForTests('profpack-estimate-recorded-');
const fixture = path.join(__dirname, '..', 'fixtures', 'heap', 'known-live-recorded.js');
const INTERVAL = 4096;
const V8_COUNT_ROUNDING = 0.06;

describe('a recorded live set of known size reads as its bytes', () => {
  it.each(['native', 'inspector'])('through the %s sampler', (sampler) => {
    const file = path.join(dir, `${sampler}.tach`);
    const truthFile = path.join(dir, `${sampler}.json`);
    const env = { PROFPACK_HEAP_SAMPLER: sampler };
    const rec = cli(
      [
        'record',
        '--heap',
        '--heap-interval',
        String(INTERVAL),
        '-o',
        file,
        '--',
        process.execPath,
        '--expose-gc',
      ].concat([fixture, truthFile, '4000', '320']),
      env,
    );
    expect(rec.status, rec.stderr).toBe(0);
    const { truthBytes } = JSON.parse(fs.readFileSync(truthFile, 'utf8')) as { truthBytes: number };
    expect(truthBytes).toBeGreaterThan(4000 * 320 * 8);
    const top = cli(['top', file, '--sample-type', 'inuse_space', '--json', '-n', '50']);
    expect(top.status, top.stderr).toBe(0);
    const rows = (JSON.parse(top.stdout) as { rows: { funcname: string; self: number }[] }).rows;
    const kept = rows.find((r) => r.funcname === 'keepArrays');
    expect(kept, top.stdout.slice(0, 2000)).toBeDefined();
    // About truthBytes / INTERVAL samples make the estimate.
    const tolerance = 5 / Math.sqrt(truthBytes / INTERVAL) + V8_COUNT_ROUNDING;
    const ratio = kept!.self / truthBytes;
    expect({ sampler, ratio, ok: Math.abs(ratio - 1) < tolerance }).toMatchObject({ ok: true });
  });
});
