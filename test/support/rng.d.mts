/** Numbers in [0, 1) from a 32-bit seed (mulberry32): the same stream on every run. */
export function rng(seed: number): () => number;
