/** Running a program recorded (`profpack record`): the preload it loads, its settings, its children's files. */
export {
  DEFAULT_KILL_AFTER_MS,
  PRELOAD_PATH,
  runRecorded,
  type RunRecordedOptions,
  type RunRecordedResult,
} from './run-recorded';
export { inProcessCommand, recordInProcess, type InProcessCommand, type InProcessEnd } from './in-process';
