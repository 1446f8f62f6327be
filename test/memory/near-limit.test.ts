// test tier: slow (programs run into V8's real heap limit, ~10 s)
/**
 * The near-out-of-memory trigger against V8's real abort (Node's
 * --max-old-space-size=64): a program hoarding arrays, small ones that V8
 * first keeps in the young generation and big ones in the large-object space,
 * reports the watcher's usage as it goes; the report one check interval
 * before the last one must have passed the default ratio, so the recorder's
 * check would have polled in time. Judged by what the program reported, never by time.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  HeapLimitWatcher,
  LIMIT_CHECK_MS,
  NEAR_LIMIT_LAST_STAND,
  NEAR_LIMIT_MIN_STEP,
  NEAR_LIMIT_POLL_SHARE,
} from '../../lib/record/program/heap/limit';
import { DEFAULT_NEAR_LIMIT_RATIO } from '../../lib/record/settings/heap-options';

const probe = path.join(__dirname, '..', 'fixtures', 'heap', 'near-limit-probe.js');
// The watcher as the recorder runs it: limit.ts imports only node:v8, so it is transpiled alone (a whole build's
// tsc is a minute on a loaded machine).
const dir = fs.mkdtempSync(path.join(tmpdir(), 'profpack-nearlimit-'));
const limitJs = path.join(dir, 'limit.js');
const limitTs = path.join(__dirname, '..', '..', 'lib', 'record', 'program', 'heap', 'limit.ts');
fs.writeFileSync(
  limitJs,
  ts.transpileModule(fs.readFileSync(limitTs, 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
  }).outputText,
);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the near-limit trigger fires before V8 aborts', () => {
  it.each([
    ['small arrays, young first (100 doubles)', 100],
    ['arrays of 10,000 doubles', 10_000],
    ['large-object arrays (100,000 doubles)', 100_000],
  ])(
    '%s',
    (_what, doubles) => {
      const r = spawnSync(process.execPath, ['--max-old-space-size=64', probe, limitJs, String(doubles)], {
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      });
      expect(r.stderr).toContain('JavaScript heap out of memory');
      const looks = [...r.stderr.matchAll(/^usage (\d+) (\S+) (\d+)$/gm)].map((m) => ({
        ms: Number(m[1]),
        use: Number(m[2]),
        arrays: Number(m[3]),
      }));
      expect(looks.length).toBeGreaterThan(10);
      // The recorder looks every LIMIT_CHECK_MS: the look that long before the last one must have passed the ratio.
      // "That long" in the program's own progress (the probe hoards every 10 ms), not the wall clock: on a loaded
      // machine the wall clock runs on while the program waits for a CPU, and the look 50 ms of wall earlier may be
      // more hoarding behind than the recorder's check ever is.
      const perTick = Math.max(1, Math.round(20000 / doubles));
      const behind = (LIMIT_CHECK_MS / 10) * perTick;
      const lastArrays = looks.at(-1)!.arrays;
      const earlier = looks.filter((l) => l.arrays <= lastArrays - behind).at(-1)!;
      expect({ earlier, ok: earlier.use >= DEFAULT_NEAR_LIMIT_RATIO && earlier.use < 1.2 }).toMatchObject({ ok: true });
    },
    120_000,
  );
});

describe('HeapLimitWatcher.nearPollDue', () => {
  const share = fc.double({ min: 0, max: 1.3, noNaN: true });
  const ms = fc.double({ min: 0, max: 10_000, noNaN: true });

  it('polls a climbing heap, never one that stands still under the last stand, never faster than 5x a poll', () => {
    fc.assert(
      fc.property(share, share, share, share, ms, ms, (now, atLastPoll, oldNow, oldAtLastPoll, since, cost) => {
        const due = HeapLimitWatcher.nearPollDue(
          { now, atLastPoll },
          { now: oldNow, atLastPoll: oldAtLastPoll },
          since,
          cost,
        );
        if (since < cost * NEAR_LIMIT_POLL_SHARE) expect(due).toBe(false);
        else if (now >= NEAR_LIMIT_LAST_STAND) expect(due).toBe(true);
        else if (oldNow <= oldAtLastPoll) expect(due).toBe(false);
        else if (oldNow >= oldAtLastPoll + Math.max(NEAR_LIMIT_MIN_STEP, (1 - atLastPoll) / 16)) expect(due).toBe(true);
      }),
    );
  });

  it('takes a bounded number of polls for a climb from the ratio to the last stand, however often it looks', () => {
    // A heap whose old spaces climb from 85 % to 99.9 % in 100,000 looks, the whole use 5 % above them.
    let polls = 0;
    let atLastPoll = { now: 0, old: 0 };
    for (let look = 0; look <= 100_000; look++) {
      const old = 0.85 + (0.149 * look) / 100_000;
      const use = { now: old + 0.05 > 0.999 ? 0.999 : old + 0.05, atLastPoll: atLastPoll.now };
      if (HeapLimitWatcher.nearPollDue(use, { now: old, atLastPoll: atLastPoll.old }, 1000, 0)) {
        polls++;
        atLastPoll = { now: use.now, old };
      }
    }
    // Steps of 1/16 of the headroom, at least 0.25 % of the limit: ~40 of them, not a poll per look.
    expect(polls).toBeGreaterThan(10);
    expect(polls).toBeLessThan(80);
  });
});
