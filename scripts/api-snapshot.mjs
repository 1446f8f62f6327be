// The public API as a list of names: what the package entry (lib/index.ts, compiled to package.json's main and
// exports) exports, split into runtime values and type-only names, the members of its namespaces, and every
// ErrorCode with its code string. test/public-api.test.ts checks that nothing in the snapshot of an earlier main
// (test/fixtures/api/) has gone; additions are allowed.
//   node scripts/api-snapshot.mjs [COMMIT]   prints the snapshot of COMMIT's lib/ (default: the working tree's)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The snapshot of the entry `libDir/index.ts`. */
export function apiSnapshot(libDir) {
  const entry = path.join(libDir, 'index.ts');
  const program = ts.createProgram([entry], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
    typeRoots: [path.join(repoRoot, 'node_modules', '@types')],
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(entry);
  if (!source) throw new Error(`api-snapshot: no ${entry}`);
  const moduleSymbol = checker.getSymbolAtLocation(source);
  const values = [];
  const types = [];
  const namespaces = {};
  let errorCodes = {};
  for (const symbol of checker.getExportsOfModule(moduleSymbol)) {
    const name = symbol.getName();
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    if (!(target.flags & ts.SymbolFlags.Value)) {
      types.push(name);
      continue;
    }
    values.push(name);
    if (target.flags & ts.SymbolFlags.Module) {
      namespaces[name] = checker
        .getExportsOfModule(target)
        .filter((member) => {
          const resolved = member.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(member) : member;
          return (resolved.flags & ts.SymbolFlags.Value) !== 0;
        })
        .map((member) => member.getName())
        .sort();
    }
    if (name === 'ErrorCode') {
      const type = checker.getTypeOfSymbolAtLocation(target, source);
      errorCodes = Object.fromEntries(
        checker.getPropertiesOfType(type).map((p) => {
          const literal = checker.getTypeOfSymbolAtLocation(p, source);
          if (!literal.isStringLiteral())
            throw new Error(`api-snapshot: ErrorCode.${p.getName()} is not a string literal`);
          return [p.getName(), literal.value];
        }),
      );
    }
  }
  return { values: values.sort(), types: types.sort(), namespaces, errorCodes };
}

/** The snapshot of `commit`'s lib/, read from git into a temporary directory. */
export function apiSnapshotAt(commit) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'profpack-api-'));
  try {
    const tar = execFileSync('git', ['archive', commit, 'lib'], { cwd: repoRoot, maxBuffer: 1 << 28 });
    execFileSync('tar', ['-x', '-C', dir], { input: tar });
    fs.symlinkSync(path.join(repoRoot, 'node_modules'), path.join(dir, 'node_modules'));
    return apiSnapshot(path.join(dir, 'lib'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const commit = process.argv[2];
  const snapshot = commit ? { commit, ...apiSnapshotAt(commit) } : apiSnapshot(path.join(repoRoot, 'lib'));
  process.stdout.write(JSON.stringify(snapshot, null, 2) + '\n');
}
