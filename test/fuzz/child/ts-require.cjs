// Lets a plain `node` child process require the TypeScript sources of lib/
// (tests spawn children to measure peak RSS, die by SIGKILL, or write to
// /dev/full without taking the vitest worker down). Each .ts file is
// transpiled on load with the project's compiler (no type checking); the
// output is cached in the temp directory by content hash, so later children
// start without loading the compiler at all.
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');

const cacheDir = path.join(os.tmpdir(), `profpack-ts-cache-${process.getuid ? process.getuid() : 0}`);
let ts = null;

require.extensions['.ts'] = function loadTs(module, filename) {
  const source = fs.readFileSync(filename, 'utf8');
  const key = crypto.createHash('sha1').update(filename).update('\0').update(source).digest('hex');
  const cached = path.join(cacheDir, `${key}.js`);
  let output;
  try {
    output = fs.readFileSync(cached, 'utf8');
  } catch {
    ts ??= require('typescript');
    output = ts.transpileModule(source, {
      fileName: filename,
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        esModuleInterop: true,
        sourceMap: false,
      },
    }).outputText;
    fs.mkdirSync(cacheDir, { recursive: true });
    // Write then rename: children running at once never read half a file.
    const tmp = `${cached}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, output);
    fs.renameSync(tmp, cached);
  }
  module._compile(output, filename);
};
