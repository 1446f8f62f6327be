// `npm pack` says loudly when prebuilds/ has no addon for a shipped platform (issue 38); silent when each has one.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './support/environment';
import { scratchDir } from './support/scratch-dir';

const dir = scratchDir('profpack-prepack-');
const check = (prebuilds: string) =>
  spawnSync(process.execPath, [path.join(repoRoot, 'scripts', 'prepack-check.mjs')], {
    encoding: 'utf8',
    env: { ...process.env, PROFPACK_PREBUILDS_DIR: prebuilds },
  });

describe('prepack check', () => {
  it('names the platforms without an addon, and says nothing once each has one', () => {
    fs.mkdirSync(path.join(dir, 'linux-x64'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'linux-x64', 'profpack.glibc.node'), '');
    const some = check(dir);
    expect(some.status).toBe(0);
    expect(some.stderr).toContain('WARNING: prebuilds/ has no addon for linux-arm64, win32-x64');
    for (const p of ['linux-arm64', 'win32-x64']) {
      fs.mkdirSync(path.join(dir, p));
      fs.writeFileSync(path.join(dir, p, 'profpack.node'), '');
    }
    expect(check(dir).stderr).toBe('');
  });
});
