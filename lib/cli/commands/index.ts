// lib/cli/commands: one file per `profpack` command, each a register function main.ts calls for the command
// its command line names (scripts/lazy-entry.mjs defers this entry's modules: the others never load).
export { registerConvert } from './convert';
export { registerDiff } from './diff';
export { registerDowngrade } from './downgrade';
export { registerDump } from './dump';
export { registerExport, registerMerge, registerSql } from './fleet';
export { registerFlame } from './flame';
export { registerInfo, infoLines } from './info';
export { registerLeaks } from './leaks';
export { registerRecord } from './record';
export { registerRecover } from './recover';
export { registerTop } from './top';
