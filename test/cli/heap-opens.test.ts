// test tier: slow (a rotated heap recording, then leaks, ~15 s)
/**
 * `leaks DIR` opens each rotated file once: the listing leaves the check of a writer's open header to the heap
 * reader, which opens the file anyway; the process identity comes from the same read. Counted by a preload that
 * wraps every fs call that opens a path (the native reader's own opens are not on this path: heap sections are
 * read through lib/input.ts).
 */
import { closeSync, copyFileSync, openSync, readFileSync, readdirSync, writeFileSync, writeSync } from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildForTests } from '../support/build';

const { dir, cli } = buildForTests('profpack-heap-opens-');

const COUNTER = `
const fs = require('node:fs');
const path = require('node:path');
const counts = {};
for (const name of ['openSync', 'readFileSync']) {
  const original = fs[name];
  fs[name] = function (p, ...rest) {
    if (typeof p === 'string' && p.endsWith('.tach')) counts[path.basename(p)] = (counts[path.basename(p)] ?? 0) + 1;
    return original.call(this, p, ...rest);
  };
}
process.on('exit', () => fs.writeFileSync(process.env.OPENS_OUT, JSON.stringify(counts)));
`;

describe('heap questions on a rotated directory', () => {
  beforeAll(() => {
    writeFileSync(path.join(dir, 'count-opens.cjs'), COUNTER);
    // Allocating on a timer, so that harvests run between the bursts; a poll at every harvest (not paced by the poll's
    // cost, which on a loaded machine's inspector path can leave one poll in 4 s), so that each 1 s file has events.
    const program =
      'const kept = []; const t = setInterval(() => { for (let i = 0; i < 2000; i++) kept.push(new Array(64).fill(1)); ' +
      'if (kept.length > 20000) kept.length = 0; }, 10); setTimeout(() => clearInterval(t), 4000);';
    const r = cli([
      'record',
      '--heap',
      '--no-cpu',
      '--heap-polls',
      'harvest',
      '--harvest-ms',
      '250',
      '--rotate',
      '1s',
      '--dir',
      'rot',
      '--',
      process.execPath,
      '-e',
      program,
    ]);
    expect(r.status, r.stderr).toBe(0);
  }, 120_000);

  it('opens each file once, and still skips an unfinished one with a warning', () => {
    const files = readdirSync(path.join(dir, 'rot')).filter((f) => f.endsWith('.tach'));
    expect(files.length).toBeGreaterThanOrEqual(2);
    // A rotating writer's next file: its header still the zero placeholder.
    const unfinished = 'profile-99999999T999999Z-1-99999.tach';
    copyFileSync(path.join(dir, 'rot', files[0]!), path.join(dir, 'rot', unfinished));
    const fd = openSync(path.join(dir, 'rot', unfinished), 'r+');
    writeSync(fd, new Uint8Array(64), 0, 64, 0);
    closeSync(fd);

    const out = path.join(dir, 'opens.json');
    const r = cli(['leaks', 'rot', '--json'], {
      NODE_OPTIONS: `--require ${path.join(dir, 'count-opens.cjs')}`,
      OPENS_OUT: out,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/1 unfinished profile\(s\) skipped[^\n]*99999\.tach/);
    const counts = JSON.parse(readFileSync(out, 'utf8')) as Record<string, number>;
    expect(counts).toEqual(Object.fromEntries([...files, unfinished].map((f) => [f, 1])));
  });
});
