// No line over 120 characters in lib/ (a formatter wraps code, not strings, comments or template
// literals: those are wrapped by hand). `npm run lint` runs it after Prettier.
//   node scripts/line-length.mjs [DIR…]   prints file:line: length for each long line, exits 1 if any
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

const LIMIT = 120;
const dirs = process.argv.length > 2 ? process.argv.slice(2) : ['lib'];
const long = [];
(function walk(entries) {
  for (const entry of entries) {
    for (const e of readdirSync(entry, { withFileTypes: true })) {
      const full = path.join(entry, e.name);
      if (e.isDirectory()) walk([full]);
      else if (/\.(ts|js|mjs|cjs)$/.test(e.name)) {
        readFileSync(full, 'utf8')
          .split('\n')
          .forEach((line, i) => {
            if ([...line].length > LIMIT) long.push(`${full}:${i + 1}: ${[...line].length}`);
          });
      }
    }
  }
})(dirs);
for (const line of long) console.log(line);
if (long.length > 0) {
  console.log(`line-length: ${long.length} lines over ${LIMIT} characters`);
  process.exit(1);
}
