// Rewrites dist/index.js (tsc's CommonJS emit of lib/index.ts) so that
// `require('profpack')` loads only errors and backend; every other module
// loads on first access to one of its exports (issue 18: cold start). The
// export list stays in one place, lib/index.ts; this only changes when the
// `require` calls tsc emitted for it run. Each deferred module becomes a
// proxy that requires it on first property read, so the export getters keep
// tsc's `return x_1.Name` shape, which Node's CommonJS export detection
// (import of dist/index.js from ES modules) recognises. Any emit this does
// not recognise fails the build rather than silently loading eagerly.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const file = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js');
const eager = new Set(['./errors', './backend']); // small, and every first call needs them
const marker = '// Loaded on first use: see scripts/lazy-entry.mjs.';
const source = readFileSync(file, 'utf8');
if (source.includes(marker)) process.exit(0); // already rewritten (tsc did not run)
const helper = `${marker}
function lazyModule(load) {
    var loaded;
    return new Proxy({}, { get: function (_, key) { return (loaded || (loaded = load()))[key]; } });
}`;
const out = source.split('\n').map((line) => {
  let m = /^var (\w+) = require\("(\.[^"]+)"\);$/.exec(line);
  if (m) return eager.has(m[2]) ? line : `var ${m[1]} = lazyModule(function () { return require("${m[2]}"); });`;
  m = /^exports\.(\w+) = __importStar\(require\("(\.[^"]+)"\)\);$/.exec(line);
  if (m) {
    return `var ${m[1]}_namespace = lazyModule(function () { return { namespace: __importStar(require("${m[2]}")) }; });
Object.defineProperty(exports, "${m[1]}", { enumerable: true, get: function () { return ${m[1]}_namespace.namespace; } });`;
  }
  if (/require\(/.test(line)) throw new Error(`lazy-entry: unrecognised require in dist/index.js: ${line}`);
  return line;
});
const text = out.join('\n');
if (!text.startsWith('"use strict";\n')) throw new Error('lazy-entry: dist/index.js does not start with "use strict"');
writeFileSync(file, text.replace('"use strict";\n', `"use strict";\n${helper}\n`));
