/**
 * The status bits of a sample (Tachyon's thread status byte, CPython's
 * names): the model carries them for every format, and lib/tachyon writes
 * them as they are. Defined here so the model depends on no file format.
 */
export const ThreadStatus = {
  HasGil: 1,
  OnCpu: 2,
  Unknown: 4,
  GilRequested: 8,
  HasException: 16,
  MainThread: 32,
} as const;
