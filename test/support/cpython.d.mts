export const cpythonToolsDir: string;
export function cpythonInterpreter(): string;
