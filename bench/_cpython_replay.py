"""Times CPython 3.15's own BinaryReader open + replay on each file given.

Like bench/read.mjs's collector, the collector counts the timestamps it
receives (CPython has already built the resolved FrameInfo lists by then).
argv: warmup, reps, path. Prints the mean seconds of one open + replay over
the reps (after the warmup ones).
"""
import json
import sys
import time

import _remote_debugging


class Counter:
    def __init__(self):
        self.n = 0

    def collect(self, stack_frames, timestamps_us=None):
        self.n += len(timestamps_us)


warmup, reps, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
total = 0.0
for r in range(warmup + reps):
    t0 = time.perf_counter()
    reader = _remote_debugging.BinaryReader(path)
    c = Counter()
    n = reader.replay(c)
    reader.close()
    dt = time.perf_counter() - t0
    assert n == c.n
    if r >= warmup:
        total += dt
print(json.dumps(total / reps))
