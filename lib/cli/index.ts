// lib/cli: the `profpack` command (main.ts is the bin). This entry is for code outside the CLI that shows what
// a command shows: the demo prints `profpack info`'s lines.
export { infoLines } from './commands/index';
