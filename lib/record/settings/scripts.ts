/**
 * The two scripts a recording starts by path, named here once: the preload a recorded program loads
 * (`node --require`), and the writer process `startRecording()` spawns. Neither is imported by what starts it.
 */
import * as path from 'node:path';

/** launch/preload.js: what `profpack record` gives the program it runs. */
export const PRELOAD_PATH = path.join(__dirname, '..', 'launch', 'preload.js');

/** writer/process-main.js: the process that writes a `startRecording()` file. */
export const WRITER_PROCESS_PATH = path.join(__dirname, '..', 'writer', 'process-main.js');
