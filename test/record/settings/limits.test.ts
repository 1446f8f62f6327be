/**
 * Timers and numbers of recording (issue 29): every duration and interval is
 * range-checked with a coded error above its maximum (Node's timers take at
 * most 2^31-1 ms and fire after 1 ms beyond it; V8's sampling interval is an
 * int of µs), and two rotating writers of one process name their files apart.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf } from '../../support/refusals';
import { startRecording } from '../../../lib/record/index';
import { MAX_INTERVAL_US, MAX_TIMER_MS, checkRotate, parseDuration } from '../../../lib/record/settings/index';
import { RotationFiles } from '../../../lib/record/writer/index';
import { compileBuild, type Build } from '../../support/build';
import { SLOWDOWN } from '../../support/environment';

let build: Build;
const dir = fs.mkdtempSync(path.join(tmpdir(), 'profpack-record-limits-'));
beforeAll(() => {
  build = compileBuild();
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  build?.cleanup();
});

describe('ranges', () => {
  it('the bounds are 2^31-1 ms and 2^31-1 µs', () => {
    expect(MAX_TIMER_MS).toBe(2_147_483_647);
    expect(MAX_INTERVAL_US).toBe(2_147_483_647);
  });
  it('--rotate: 596h fits a timer, 597h does not', () => {
    expect(parseDuration('596h')).toBe(596 * 3_600_000);
    expect(codeOf(() => parseDuration('597h'))).toBe('ERR_INVALID_ARGUMENT');
    expect(codeOf(() => parseDuration('0s'))).toBe('ERR_INVALID_ARGUMENT');
    expect(codeOf(() => checkRotate({ everyMs: MAX_TIMER_MS + 1, dir }))).toBe('ERR_INVALID_ARGUMENT');
  });
  it('startRecording: harvestMs and intervalUs above their maximum are refused before anything starts', () => {
    expect(codeOf(() => startRecording({ harvestMs: MAX_TIMER_MS + 1, out: path.join(dir, 'h.tach') }))).toBe(
      'ERR_INVALID_ARGUMENT',
    );
    expect(codeOf(() => startRecording({ intervalUs: 3_000_000_000, out: path.join(dir, 'i.tach') }))).toBe(
      'ERR_INVALID_ARGUMENT',
    );
    expect(fs.existsSync(path.join(dir, 'h.tach'))).toBe(false);
    expect(fs.existsSync(path.join(dir, 'i.tach'))).toBe(false);
  });
  it('startRecording: flushIntervalMs out of range or fractional is refused before anything starts, for both writers', () => {
    // The inline writer's flushes run on the recorder's timer, so startRecording checks what ProfileWriter checked.
    for (const writer of ['inline', 'process'] as const) {
      for (const flushIntervalMs of [0, 2.5, MAX_TIMER_MS + 1]) {
        const out = path.join(dir, `f-${writer}-${flushIntervalMs}.tach`);
        expect(
          codeOf(() => startRecording({ writer, flushIntervalMs, out })),
          `${writer} ${flushIntervalMs}`,
        ).toBe('ERR_INVALID_ARGUMENT');
        expect(fs.existsSync(out)).toBe(false);
      }
    }
  });
  it('profpack record: --interval-us 3000000000, --harvest-ms 2^31, --flush-ms 2^31, --rotate 600h: exit 2, one line, nothing run', () => {
    const marker = path.join(dir, 'ran');
    for (const flags of [
      ['--interval-us', '3000000000'],
      ['--harvest-ms', String(2 ** 31)],
      ['--flush-ms', String(2 ** 31)],
      ['--rotate', '600h'],
    ]) {
      const r = spawnSync(
        process.execPath,
        [
          build.cli,
          'record',
          ...flags,
          '--out',
          path.join(dir, 'r.tach'),
          '--',
          process.execPath,
          '-e',
          `require('fs').writeFileSync(${JSON.stringify(marker)}, '')`,
        ],
        {
          encoding: 'utf8',
          cwd: dir,
          timeout: 60_000 * SLOWDOWN,
        },
      );
      expect(r.status, flags.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^profpack: ERR_INVALID_ARGUMENT: /)]);
      expect(fs.existsSync(marker)).toBe(false);
    }
  });
});

describe('rotation names', () => {
  it('two rotating writers of one process, started in the same second, never share a file name', () => {
    const options = checkRotate({ everyMs: 1000, dir: path.join(dir, 'rot') });
    const a = new RotationFiles(options);
    const b = new RotationFiles(options);
    const names = new Set<string>();
    for (let i = 0; i < 5; i++) {
      names.add(a.next());
      names.add(b.next());
    }
    expect(names.size).toBe(10);
  });
});
