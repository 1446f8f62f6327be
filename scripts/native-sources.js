// Lists the addon's C++ sources for binding.gyp, so each concern adds files
// under native/<concern>/ without touching the build file. native/fuzz/ holds
// libFuzzer harnesses, which are built separately and never linked into the addon; native/heap/ is the
// per-Node-major V8 addon (binding.gyp's profpack_heap target).
'use strict';
const fs = require('fs');
const path = require('path');

const root = path.join(__dirname, '..', 'native');
const found = [];
(function walk(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'fuzz' && entry.name !== 'heap') walk(full);
    } else if (entry.name.endsWith('.cc')) {
      found.push(path.relative(path.join(__dirname, '..'), full).split(path.sep).join('/'));
    }
  }
})(root);
process.stdout.write(found.join(' '));
