"""Feed a profpack sample file to CPython 3.15's own BinaryWriter.

Used by bench/write.mjs (CPython's writer as the baseline, timed) and by
test/tachyon/write/generated.test.ts (CPython's bytes and get_stats() for
generated profiles).  Runs under CPython 3.15 (bash
../shared/tools/cpython315/install.sh prints the interpreter).

  python3.15 cpython_write.py IN.samples OUT.bin [IN2.samples OUT2.bin ...]
  python3.15 cpython_write.py --synthetic THREADS CALLS SAME_PCT SEED COMPRESSION OUT.bin

Prints one JSON line per pair: {"file", "seconds" (CPU seconds of the write_sample calls plus
finalize only; building the Python objects is not timed), "samples",
"stats" (get_stats() before finalize)}.

IN.samples (little endian, written by writeSampleFile in the JS side):
  b"PPWS", u32 n, n bytes of JSON meta {start, interval, compression,
  mode, features, frames: [[filename, funcname, lineno|null, end_lineno,
  column, end_column, opcode|null] | [filename, funcname, null, opcode|null]]}
  (the short form has location None),
  u32 call count, then per call: u64 timestamp, u32 thread count, and per
  thread: u64 thread_id, u32 interpreter_id, i32 status, u32 depth,
  depth x u32 frame index (innermost first).
"""
import json
import struct
import sys
import time

import _remote_debugging as rd

BATCH = 20000  # calls materialised as Python objects at a time


def frame_objects(meta):
    out = []
    for f in meta["frames"]:
        if len(f) == 4:
            out.append(rd.FrameInfo((f[0], None, f[1], f[3])))
        else:
            out.append(rd.FrameInfo((f[0], rd.LocationInfo((f[2], f[3], f[4], f[5])), f[1], f[6])))
    return out


def write_timed(writer, batch):
    """Writes a batch of (interpreters, timestamp) calls; returns the CPU seconds the writer took."""
    t0 = time.process_time()
    for interps, ts in batch:
        writer.write_sample(interps, ts)
    return time.process_time() - t0


def finish(writer, dst, seconds, samples):
    """Finalizes the file (timed too: it flushes and compresses) and prints the run's JSON line."""
    stats = writer.get_stats()
    t0 = time.process_time()
    writer.finalize()
    seconds += time.process_time() - t0
    print(json.dumps({"file": dst, "seconds": seconds, "samples": samples, "stats": stats}), flush=True)


def run(src, dst):
    data = memoryview(open(src, "rb").read())
    if bytes(data[:4]) != b"PPWS":
        raise SystemExit(f"{src}: not a profpack sample file")
    (n,) = struct.unpack_from("<I", data, 4)
    meta = json.loads(bytes(data[8:8 + n]).decode("utf-8"))
    pos = 8 + n
    (calls,) = struct.unpack_from("<I", data, pos)
    pos += 4
    frames = frame_objects(meta)
    writer = rd.BinaryWriter(dst, meta["interval"], meta["start"],
                             compression=meta["compression"],
                             mode=meta.get("mode", -1),
                             capture_features=meta.get("features", -1))
    seconds = 0.0
    samples = 0
    done = 0
    head = struct.Struct("<QI")
    thread = struct.Struct("<QIiI")
    while done < calls:
        batch = []
        for _ in range(min(BATCH, calls - done)):
            ts, nthreads = head.unpack_from(data, pos)
            pos += head.size
            interps = []
            cur_id = None
            cur = None
            for _ in range(nthreads):
                tid, interp, status, depth = thread.unpack_from(data, pos)
                pos += thread.size
                ids = struct.unpack_from(f"<{depth}I", data, pos)
                pos += 4 * depth
                if interp != cur_id:
                    cur = []
                    interps.append(rd.InterpreterInfo((interp, cur)))
                    cur_id = interp
                cur.append(rd.ThreadInfo((tid, status, [frames[i] for i in ids])))
                samples += 1
            batch.append((interps, ts))
        done += len(batch)
        seconds += write_timed(writer, batch)
    finish(writer, dst, seconds, samples)


POOL = 3000
START_US = 1_000_000
INTERVAL_US = 1000


def synthetic_frames():
    """The frame pool of bench/write.mjs's synthetic profile (same formulas)."""
    out = []
    for i in range(POOL):
        lineno = 10 + (i * 7) % 900
        col = i % 40
        loc = rd.LocationInfo((lineno, lineno + i % 3, col, col + 5 + i % 20))
        out.append(rd.FrameInfo((f"/srv/app/module_{i % 150}.py", loc, f"func_{i}", i % 200)))
    return out


def synthetic(threads, calls, same_pct, seed, compression, dst):
    """bench/write.mjs's generator, step for step (xorshift32): see syntheticProfile there."""
    x = seed
    def rnd():
        nonlocal x
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        return x
    frames = synthetic_frames()
    stacks, status = [], []
    for _ in range(threads):
        depth = 30 + rnd() % 31
        stacks.append([rnd() % POOL for _ in range(depth)])  # outermost first
        status.append(rnd() & 3)
    tids = [140_000_000_000_000 + t * 4096 for t in range(threads)]
    writer = rd.BinaryWriter(dst, INTERVAL_US, START_US, compression=compression)
    seconds = 0.0
    ts = START_US
    done = 0
    batch_calls = max(1, 40_000 // threads)
    while done < calls:
        batch = []
        for _ in range(min(batch_calls, calls - done)):
            ts += INTERVAL_US
            infos = []
            for t in range(threads):
                st = stacks[t]
                if rnd() % 100 >= same_pct:
                    pop = min(rnd() % 4, len(st) - 30)
                    if pop:
                        del st[len(st) - pop:]
                    push = min(1 + rnd() % 3, 60 - len(st))
                    for _ in range(push):
                        st.append(rnd() % POOL)
                    status[t] = rnd() & 3
                infos.append(rd.ThreadInfo((tids[t], status[t], [frames[i] for i in reversed(st)])))
            batch.append(([rd.InterpreterInfo((0, infos))], ts))
        done += len(batch)
        seconds += write_timed(writer, batch)
    finish(writer, dst, seconds, threads * calls)


def main(argv):
    if len(argv) == 8 and argv[1] == "--synthetic":
        synthetic(int(argv[2]), int(argv[3]), int(argv[4]), int(argv[5]), int(argv[6]), argv[7])
        return
    if len(argv) < 3 or len(argv) % 2 != 1:
        raise SystemExit(__doc__)
    for i in range(1, len(argv), 2):
        run(argv[i], argv[i + 1])


if __name__ == "__main__":
    main(sys.argv)
