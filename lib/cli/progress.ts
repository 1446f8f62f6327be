/**
 * The progress bar the CLI draws on stderr for inputs over 10 MB. Drawn
 * only on a terminal (or with PROFPACK_PROGRESS=1), so logs and pipes stay clean.
 */
export const PROGRESS_MIN_BYTES = 10 * 1024 * 1024;

export function progressBar(
  label: string,
  inputBytes: number,
  stream: NodeJS.WriteStream = process.stderr,
): ((done: number, total: number | undefined) => void) | undefined {
  if (inputBytes <= PROGRESS_MIN_BYTES) return undefined;
  if (!stream.isTTY && process.env.PROFPACK_PROGRESS !== '1') return undefined;
  let lastDraw = 0;
  const width = 30;
  return (done, total) => {
    const now = Date.now();
    const finished = total !== undefined && done >= total;
    if (!finished && now - lastDraw < 100) return;
    lastDraw = now;
    const text =
      total === undefined || total === 0
        ? `${label} ${done.toLocaleString('en')} samples`
        : `${label} [${'#'.repeat(Math.round((width * Math.min(done, total)) / total)).padEnd(width, '.')}] ` +
          `${Math.floor((100 * Math.min(done, total)) / total)}% ` +
          `${done.toLocaleString('en')}/${total.toLocaleString('en')} samples`;
    stream.write(stream.isTTY ? `\r${text}${finished ? '\n' : ''}` : `${text}\n`);
  };
}
