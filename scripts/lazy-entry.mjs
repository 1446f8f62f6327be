// Rewrites dist/index.js (tsc's CommonJS emit of lib/index.ts) so that
// `require('profpack')` loads only errors and backend; every other module
// loads on first access to one of its exports (issue 18: cold start). The
// same rewrite defers every wing of dist/tachyon/index.js, so the first
// ProfileReader use loads the read wing without the writer, version 2's
// file API and downgrade, and every command module of dist/cli/main.js. The export lists stay where they are (lib/index.ts,
// lib/tachyon/index.ts); this only changes when the `require` calls tsc
// emitted for them run. Each deferred module becomes a
// proxy that requires it on first property read, so the export getters keep
// tsc's `return x_1.Name` shape, which Node's CommonJS export detection
// (import of dist/index.js from ES modules) recognises. Any emit this does
// not recognise fails the build rather than silently loading eagerly.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dist = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const marker = '// Loaded on first use: see scripts/lazy-entry.mjs.';
const helper = `${marker}
function lazyModule(load) {
    var loaded;
    return new Proxy({}, { get: function (_, key) { return (loaded || (loaded = load()))[key]; } });
}`;

/** Rewrites one entry: every `require` of a relative module but those in `eager` runs on first use. */
function rewrite(file, eager) {
  const source = readFileSync(file, 'utf8');
  if (source.includes(marker)) return; // already rewritten (tsc did not run)
  const out = source.split('\n').map((line) => {
    // A package (commander) stays eager: only this project's modules are deferred.
    if (/^(const|var) \w+ = require\("[^."][^"]*"\);$/.test(line)) return line;
    // A module imported for its effect alone (the CLI's compile cache) runs where it is.
    if (/^require\("\.[^"]+"\);$/.test(line)) return line;
    let m = /^(var|const) (\w+) = require\("(\.[^"]+)"\);$/.exec(line);
    if (m) return eager.has(m[3]) ? line : `${m[1]} ${m[2]} = lazyModule(function () { return require("${m[3]}"); });`;
    m = /^exports\.(\w+) = __importStar\(require\("(\.[^"]+)"\)\);$/.exec(line);
    if (m) {
      return `var ${m[1]}_namespace = lazyModule(function () { return { namespace: __importStar(require("${m[2]}")) }; });
Object.defineProperty(exports, "${m[1]}", { enumerable: true, get: function () { return ${m[1]}_namespace.namespace; } });`;
    }
    if (/require\(/.test(line)) throw new Error(`lazy-entry: unrecognised require in ${file}: ${line}`);
    return line;
  });
  const text = out.join('\n');
  // After "use strict" (which follows the CLI's #! line).
  if (!/^(#![^\n]*\n)?"use strict";\n/.test(text))
    throw new Error(`lazy-entry: ${file} does not start with "use strict"`);
  writeFileSync(file, text.replace('"use strict";\n', `"use strict";\n${helper}\n`));
}

/**
 * Rewrites a folder's entry inside the package: every `require` of a relative module but those in `eager` runs on
 * first use, through a function (`x_1().Name`): no Proxy trap on each access, as an internal entry's exports are
 * read on hot paths (a reader's per-sample calls); nothing imports these from ES modules, so tsc's getter shape need
 * not stay. `profpack record` loads only what it uses of the recorder, the model, the writer and version 2's codings.
 */
function deferInternal(file, eager = new Set()) {
  deferRequires(
    file,
    (spec) => !eager.has(spec),
    true,
    () => {},
  );
}

/** Each `x_1.Name` read through its accessor, `x_1().Name`; `new x_1.Name(...)` as `new (x_1().Name)(...)`. */
function callDeferred(text, name) {
  return text
    .replace(new RegExp(`\\bnew ${name}\\.(\\w+)`, 'g'), `new (${name}().$1)`)
    .replace(new RegExp(`\\b${name}\\.`, 'g'), `${name}().`);
}

/**
 * Defers the named modules a (non-entry) module requires, the same way: each is required at its first use. Each
 * must be found as tsc emits it (`const x_1 = require("./spec");`), or the build fails.
 */
function deferSome(file, specs) {
  deferRequires(
    file,
    (spec) => specs.includes(spec),
    false,
    (deferred) => {
      const found = new Set(deferred.values());
      const missing = specs.filter((spec) => !found.has(spec));
      if (missing.length > 0) throw new Error(`lazy-entry: no require of ${missing.join(', ')} in ${file}`);
    },
  );
}

/**
 * deferInternal's and deferSome's one rewrite: each relative `require` whose spec `defers` accepts becomes an
 * accessor that requires it at its first call, and every use goes through it. `strict`: any other require but a
 * package's fails the build. `check(deferred: name -> spec)` runs before the file is written.
 */
function deferRequires(file, defers, strict, check) {
  const source = readFileSync(file, 'utf8');
  if (source.includes(marker)) return;
  const deferred = new Map();
  const out = source.split('\n').map((line) => {
    if (/^(const|var) \w+ = require\("[^."][^"]*"\);$/.test(line)) return line;
    const m = /^(var|const) (\w+) = require\("(\.[^"]+)"\);$/.exec(line);
    if (m && defers(m[3])) {
      const [, , name, spec] = m;
      deferred.set(name, spec);
      return `var ${name}_loaded;\nfunction ${name}() { return ${name}_loaded || (${name}_loaded = require("${spec}")); }`;
    }
    if (strict && !m && /require\(/.test(line)) throw new Error(`lazy-entry: unrecognised require in ${file}: ${line}`);
    return line;
  });
  check(deferred);
  let text = out.join('\n');
  for (const name of deferred.keys()) text = callDeferred(text, name);
  if (!/^"use strict";\n/.test(text)) throw new Error(`lazy-entry: ${file} does not start with "use strict"`);
  writeFileSync(file, text.replace('"use strict";\n', `"use strict";\n${marker}\n`));
}

rewrite(path.join(dist, 'index.js'), new Set(['./errors', './backend'])); // small, and every first call needs them
rewrite(path.join(dist, 'tachyon', 'index.js'), new Set());
// The CLI registers only the command its command line names (lib/cli/main.ts): the others' modules never load.
rewrite(path.join(dist, 'cli', 'main.js'), new Set(['./errors']));
// main.js reaches the commands through their entry, which defers each command module in turn.
rewrite(path.join(dist, 'cli', 'commands', 'index.js'), new Set());
for (const entry of [
  'record',
  // In the recorded program (or the inline writer), only the parts a recording uses: no pipe, writer process spawn
  // or CPU sampler for a heap-only inline recording, no RecordingHost or rotation for one file.
  'record/program',
  'record/program/heap',
  'record/settings',
  'record/wire',
  'record/writer',
  'profile',
  'tachyon/write',
  'tachyon/write/engines',
  'tachyon/codec',
  'tachyon/codec/heap',
  'tachyon/codec/model',
  'tachyon/file',
  'v8',
])
  deferInternal(path.join(dist, ...entry.split('/'), 'index.js'));
// Modules `record --heap` loads and never runs (the CLI's own CPU): version 1's engines (heap files are version 2:
// write/engines' entry defers each), the zstd fallback's API (zstd-napi's binding is the API where it loads), the
// reader's checks behind the tables' error paths (and the header reader they import).
deferSome(path.join(dist, 'tachyon', 'file', 'zstd', 'binding.js'), ['./fallback']);
deferSome(path.join(dist, 'tachyon', 'file', 'tables.js'), ['./layout']);
// A heap-only recording starts no CPU sampler (the main thread's agent and the workers' both import it), and an
// in-process `record --inline` no listener for a program's summary line (only a spawned --inline target sends one).
deferSome(path.join(dist, 'record', 'program', 'agent.js'), ['./cpu-sampler']);
deferSome(path.join(dist, 'record', 'program', 'worker-agent.js'), ['./cpu-sampler']);
deferSome(path.join(dist, 'record', 'launch', 'run-recorded.js'), ['./inline']);
