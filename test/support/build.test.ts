/**
 * test/support/build.ts compiles lib/ once per content of lib/ and hands the same package to every CLI test: the
 * package is shared, a writable one is a copy of its own, and the key that names it follows lib/'s content.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildKey, compileBuild } from './build';
import { repoRoot } from './environment';

describe('the compiled package the CLI tests share', () => {
  const shared = compileBuild();
  const again = compileBuild();
  const own = compileBuild({ writable: true });
  afterAll(() => own.cleanup());

  it('is one package for every caller, kept after a caller cleans up', () => {
    expect(again.root).toBe(shared.root);
    again.cleanup();
    expect(existsSync(shared.cli)).toBe(true);
    // The compiled CLI runs, and is this checkout's: its version is package.json's.
    const version = spawnSync(process.execPath, [shared.cli, '--version'], { encoding: 'utf8' });
    const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    expect(version.stdout.trim()).toBe(pkg.version);
  });

  it('is copied for a test that edits it: the edit stays in the copy, and cleanup removes the copy', () => {
    expect(own.root).not.toBe(shared.root);
    const registry = path.join('formats', 'registry.js');
    writeFileSync(path.join(own.dist, registry), '// edited\n');
    expect(readFileSync(path.join(shared.dist, registry), 'utf8')).not.toBe('// edited\n');
    const copy = compileBuild({ writable: true });
    copy.cleanup();
    expect(existsSync(copy.root)).toBe(false);
    expect(existsSync(shared.cli)).toBe(true);
  });

  it("is named by lib/'s content: an edit to a file gives another key, the same content the same key", () => {
    const fake = mkdtempSync(path.join(tmpdir(), 'profpack-build-key-'));
    try {
      mkdirSync(path.join(fake, 'lib', 'sub'), { recursive: true });
      mkdirSync(path.join(fake, 'node_modules', 'typescript'), { recursive: true });
      cpSync(path.join(repoRoot, 'tsconfig.json'), path.join(fake, 'tsconfig.json'));
      writeFileSync(path.join(fake, 'node_modules', 'typescript', 'package.json'), '{"version":"5.0.0"}');
      writeFileSync(path.join(fake, 'lib', 'sub', 'a.ts'), 'export const a = 1;\n');
      const first = buildKey(fake);
      expect(buildKey(fake)).toBe(first);
      writeFileSync(path.join(fake, 'lib', 'sub', 'a.ts'), 'export const a = 2;\n');
      const edited = buildKey(fake);
      expect(edited).not.toBe(first);
      writeFileSync(path.join(fake, 'lib', 'sub', 'b.ts'), '');
      expect(buildKey(fake)).not.toBe(edited);
      rmSync(path.join(fake, 'lib', 'sub', 'b.ts'));
      expect(buildKey(fake)).toBe(edited);
      writeFileSync(path.join(fake, 'node_modules', 'typescript', 'package.json'), '{"version":"5.0.1"}');
      expect(buildKey(fake)).not.toBe(edited);
    } finally {
      rmSync(fake, { recursive: true, force: true });
    }
  });
});
