/**
 * The recorder's own work in the recorded program, outside the agent's calls and timers: what the launch does there
 * after the samplers started (the inline recording's 'ping', the program's argv and runner). The heap sampler leaves
 * out an allocation with a frame of lib/record/program on its stack (heap/stacks.ts); run through here, that work
 * has one.
 */
export function asRecorderWork<T>(work: () => T): T {
  return work();
}
