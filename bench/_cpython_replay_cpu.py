"""One process of bench/replay-small.mjs: CPU microseconds (time.process_time) per CPython 3.15
_remote_debugging.BinaryReader(path) + replay(collector) + close(), after a warm-up; the collector counts the
timestamps, as the profpack side's does. argv: path, milliseconds of CPU to measure."""
import json
import sys
import time

import _remote_debugging


class Counter:
    def __init__(self):
        self.n = 0

    def collect(self, stack_frames, timestamps_us=None):
        self.n += len(timestamps_us)


def cycle(path):
    reader = _remote_debugging.BinaryReader(path)
    reader.replay(Counter())
    reader.close()


path, ms = sys.argv[1], float(sys.argv[2])
warm = time.process_time()
while time.process_time() - warm < 0.3:
    cycle(path)
start = time.process_time()
cycles = 0
while True:
    for _ in range(20):
        cycle(path)
    cycles += 20
    used = time.process_time() - start
    if used * 1e3 >= ms:
        break
print(json.dumps({"us": used * 1e6 / cycles}))
