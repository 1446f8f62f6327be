/**
 * Files rotated from one process are one process: each carries the
 * recorded-by note (host, pid, process start), and merge, top and flame over
 * them keep one thread per real thread; another process's files stay apart.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { infoLines } from '../../../lib/cli/commands/info';
import { openProfiles } from '../../../lib/fleet/index';
import { findRecordedBy } from '../../../lib/recorded-by';
import { ProfileReader } from '../../../lib/tachyon/index';
import { repoRoot } from '../../support/environment';
import { samplesOf } from '../../support/model';

const cli = path.join(repoRoot, 'dist', 'cli', 'main.js');
const dir = fs.mkdtempSync(path.join(tmpdir(), 'profpack-identity-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const rotated = path.join(dir, 'rotated');
const other = path.join(dir, 'other');

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: dir, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  const app = path.join(dir, 'app.js');
  // Busy in 20 ms slices (harvests run between them, as in a server) until it has had 1.2 s of CPU,
  // however loaded the machine: several rotations of 200 ms in any case.
  fs.writeFileSync(
    app,
    'let x = 0; function slice() { const end = Date.now() + 20; while (Date.now() < end) x += Math.sqrt(x + 1); if (process.cpuUsage().user < 1.2e6) setImmediate(slice); } slice();\n',
  );
  for (const [dirOut, every] of [
    [rotated, '200ms'],
    [other, '60s'],
  ] as const) {
    const r = run('record', '--rotate', every, '--dir', dirOut, '--harvest-ms', '50', '--', process.execPath, app);
    expect(r.status, r.stderr).toBe(0);
  }
});

const files = (d: string) =>
  fs
    .readdirSync(d)
    .filter((f) => f.endsWith('.tach'))
    .map((f) => path.join(d, f));

describe('rotated files of one process', () => {
  it('each carries the same process identity', () => {
    const all = files(rotated);
    expect(all.length).toBeGreaterThanOrEqual(4);
    const notes = all.map((f) => {
      const reader = ProfileReader.open(f);
      try {
        return findRecordedBy(reader.strings);
      } finally {
        reader.close();
      }
    });
    expect(new Set(notes.map((n) => `${n!.hostname}/${n!.pid}/${n!.processStartUs}`)).size).toBe(1);
  });

  it('merge makes them one thread, and info on the merge says 1 thread', () => {
    const out = path.join(dir, 'merged.tach');
    const r = run('merge', rotated, '-o', out);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`from ${files(rotated).length} files, 1 threads`));
    expect(infoLines(out).join('\n')).toMatch(/^threads: +1$/m);
  });

  it("flame and top over the directory see one thread, named main; another process's file is another thread", () => {
    const page = path.join(dir, 'flame.html');
    const r = run('flame', rotated, '-o', page);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/ 1 thread\(s\)/);
    expect(fs.readFileSync(page, 'utf8')).toContain('"name":"main"');
    const both = run('flame', rotated, other, '-o', page);
    expect(both.stdout).toMatch(/ 2 thread\(s\)/);
    const source = openProfiles([rotated, other]);
    const threads = new Set<bigint>();
    for (const s of samplesOf(source)) threads.add(s.threadId);
    expect(threads.size).toBe(2);
    expect(source.threads.map((t) => t.name)).toEqual(['main', 'main']);
    const top = run('top', rotated, '--thread', '0', '--json');
    const all = run('top', rotated, '--json');
    expect(JSON.parse(top.stdout).samples).toBe(JSON.parse(all.stdout).samples);
  });
});
