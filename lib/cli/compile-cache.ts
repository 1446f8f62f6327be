/**
 * Node's on-disk compile cache for the CLI's own modules (`module.enableCompileCache`, Node >= 22.1): V8's code
 * for each module is kept between runs, so a command compiles none of its ~100 modules again (most of the CPU
 * `profpack record` spends before its target starts is loading them). Imported first by main.ts, before any other
 * module loads. Node writes the cache under NODE_COMPILE_CACHE if set, else `<os.tmpdir()>/node-compile-cache`;
 * NODE_DISABLE_COMPILE_CACHE=1 turns it off (Node's own switch, honoured by this call). Only this process: a
 * recorded program's modules are not cached (Node passes nothing to children; the preload does not call it).
 * Node 20 has no such API: nothing happens.
 */
import * as nodeModule from 'node:module';

const enableCompileCache = (nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache;
enableCompileCache?.();
