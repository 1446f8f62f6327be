// Rewrites dist/index.js (tsc's CommonJS emit of lib/index.ts) so that
// `require('profpack')` loads only errors and backend; every other module
// loads on first access to one of its exports (issue 18: cold start). The
// export list stays in one place, lib/index.ts; this only changes when the
// `require` calls tsc emitted for it run. Any emit this does not recognise
// fails the build rather than silently loading eagerly.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const file = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js');
const eager = new Set(['./errors', './backend']); // small, and every first call needs them
const source = readFileSync(file, 'utf8');
if (source.includes('Loaded on first use')) process.exit(0); // already rewritten (tsc did not run)
const bindings = [];
let out = source.split('\n').map((line) => {
  let m = /^var (\w+) = require\("(\.[^"]+)"\);$/.exec(line);
  if (m) {
    if (eager.has(m[2])) return line;
    bindings.push(m[1]);
    return `var ${m[1]}_loaded; function ${m[1]}() { return ${m[1]}_loaded || (${m[1]}_loaded = require("${m[2]}")); }`;
  }
  m = /^exports\.(\w+) = __importStar\(require\("(\.[^"]+)"\)\);$/.exec(line);
  if (m) {
    return `var ${m[1]}_namespace; Object.defineProperty(exports, "${m[1]}", { enumerable: true, get: function () { return ${m[1]}_namespace || (${m[1]}_namespace = __importStar(require("${m[2]}"))); } });`;
  }
  if (/require\(/.test(line) && !/_loaded = require\(|_namespace = __importStar\(require\(/.test(line)) {
    throw new Error(`lazy-entry: unrecognised require in dist/index.js: ${line}`);
  }
  return line;
});
out = out.join('\n');
for (const name of bindings) out = out.replaceAll(`return ${name}.`, `return ${name}().`);
for (const name of bindings) {
  if (new RegExp(`\\b${name}\\.`).test(out)) throw new Error(`lazy-entry: ${name} is used other than in an export getter`);
}
writeFileSync(file, out.replace('"use strict";', '"use strict";\n// Loaded on first use: see scripts/lazy-entry.mjs.'));
