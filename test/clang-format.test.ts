/**
 * `npm run lint`'s clang-format step (scripts/clang-format.sh) fails, saying why, when clang-format 14 is missing:
 * with none on PATH, or only another version (which lays some lines out differently), native/ would go unchecked
 * while the lint passed.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './support/environment';

/** Runs the script with PATH holding only the tools it needs besides clang-format, and `extra` (name -> script). */
function runWithout14(extra: Record<string, string>): { status: number | null; out: string } {
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'profpack-clang-format-'));
  try {
    for (const tool of ['bash', 'dirname', 'find', 'sort', 'grep', 'head']) {
      const found = spawnSync('bash', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
      fs.symlinkSync(found, path.join(bin, tool));
    }
    for (const [name, text] of Object.entries(extra)) fs.writeFileSync(path.join(bin, name), text, { mode: 0o755 });
    const run = spawnSync(path.join(bin, 'bash'), [path.join(repoRoot, 'scripts', 'clang-format.sh'), '--check'], {
      encoding: 'utf8',
      env: { PATH: bin },
    });
    return { status: run.status, out: run.stdout + run.stderr };
  } finally {
    fs.rmSync(bin, { recursive: true, force: true });
  }
}

describe('scripts/clang-format.sh without clang-format 14', () => {
  it('fails, naming the package to install, when no clang-format is on PATH', () => {
    const { status, out } = runWithout14({});
    expect(status).toBe(1);
    expect(out).toMatch(/clang-format: FAILED, native\/ not checked: clang-format 14 is needed/);
    expect(out).toMatch(/apt-get install clang-format-14/);
    expect(out).toMatch(/found: none/);
  });

  it('fails, naming the version it found, when only another version is on PATH', () => {
    const { status, out } = runWithout14({
      'clang-format': '#!/bin/sh\necho "Debian clang-format version 16.0.6"\nexit 0\n',
    });
    expect(status).toBe(1);
    expect(out).toMatch(/found: Debian clang-format version 16\.0\.6/);
  });
});
