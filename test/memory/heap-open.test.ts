// test tier: slow (unreadable heap files through the compiled CLI, ~13 s)
// A heap file that cannot be read is an error, never "no heap events" (issue 38).
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHeapFile } from '../../lib/memory/index';
// The package's ProfileWriter: its heapSink() reads V8 call frames by default (lib/profile-writer.ts).
import { ProfileWriter } from '../../lib/index';
import { compileBuild, type Build } from '../support/build';
import { SLOWDOWN } from '../support/environment';
import { testedBackends } from '../support/backends';
import { thrown } from '../support/refusals';

let build: Build;
let dir: string;

beforeAll(() => {
  build = compileBuild();
  chmodSync(build.root, 0o755); // the CLI may run as nobody below
  dir = mkdtempSync(path.join(tmpdir(), 'profpack-heap-open-'));
  chmodSync(dir, 0o755);
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  build?.cleanup();
});

/** A version-2 file with one sampled allocation. */
function heapFile(file: string): string {
  const w = new ProfileWriter(file, { sampleIntervalUs: 1000n, startTimeUs: 1000n, formatVersion: 2 });
  w.writeStack(1n, 0, 1001n, 0, [w.internFrame({ filename: 'a.js', funcname: 'f' })]);
  const sink = w.heapSink();
  sink.begin({ intervalBytes: 4096 });
  const frees = { threadId: 1, timeUs: 2000, sinceUs: 1000, ordinals: new Uint32Array(0) };
  sink.frees(frees);
  w.finalize();
  return file;
}

describe('unreadable heap files', () => {
  it('a path that is not a readable file is a coded error from openHeapFile, not null', () => {
    const sub = path.join(dir, 'a-directory.tach');
    mkdirSync(sub);
    expect(thrown(() => openHeapFile(sub)).code).toMatch(/^ERR_(IO|NOT_REGULAR_FILE)$/);
  });

  describe.each(testedBackends)('%s', (which) => {
    it('an unreadable file (EACCES) is one ERR_IO line and exit 2 from top --heap and leaks', () => {
      const file = path.join(dir, `${which}-locked.tach`);
      copyFileSync(heapFile(path.join(dir, `${which}-open.tach`)), file);
      chmodSync(file, 0o000);
      // Root reads any file: the CLI runs as nobody then, so that EACCES is real.
      const asNobody = process.getuid?.() === 0 ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] : [];
      for (const command of [['top', '--heap'], ['leaks']]) {
        const argv = [...asNobody, process.execPath, build.cli, ...command, file];
        const run = spawnSync(argv[0]!, argv.slice(1), {
          encoding: 'utf8',
          timeout: 60_000 * SLOWDOWN,
          env: { ...process.env, PROFPACK_BACKEND: which },
        });
        expect(run.status, run.stderr).toBe(2);
        expect(run.stderr.trim()).toMatch(/^profpack: ERR_IO: .*permission denied \(EACCES\)$/);
      }
    });
  });
});
