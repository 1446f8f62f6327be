"""Per-sample (thread, time, stack) of Tachyon files, as CPython 3.15's own reader replays them.

Runs under the interpreter ../shared/tools/cpython315/install.sh prints. argv: the files. Writes JSON
lines to stdout as it replays (never a list of samples in memory: a 1 M-sample file stays small):
  {"file": path, "info": BinaryReader.get_info()}               first, per file
  {"k": id, "f": [[funcname, filename, lineno], ...], "h": [i, ...]}
                                                                a stack the first time it is seen (innermost first);
                                                                h: the frames CPython's collectors hide (profiler's own)
  {"t": "thread_id", "i": interpreter_id, "s": id, "st": status, "ts": [timestamp_us, ...]}   one collect() thread
  {"collapsed": [[[[filename, lineno, funcname], ...], "thread_id", count], ...]}
                                                                CPython's own CollapsedStackCollector (what `replay
                                                                --collapsed` writes), fed the same replay; outermost first
  {"end": path, "error": null | "message"}                      last, per file
"""
import json
import sys

import _remote_debugging
from profiling.sampling.collector import filter_internal_frames
from profiling.sampling.stack_collector import CollapsedStackCollector

out = sys.stdout
# Thread ids always, and times past 2^53, go out as strings: JSON numbers read as doubles in Node.
SAFE = 1 << 53


def emit(obj):
    out.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))
    out.write("\n")


def plain(value):
    if isinstance(value, tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, float) and value != value:
        return None
    return value


class Collector:
    def __init__(self, interval):
        self.stacks = {}
        # skip_idle=False, as `replay` makes it.
        self.collapsed = CollapsedStackCollector(interval, skip_idle=False)

    def stack_id(self, frames):
        key = tuple(
            (f.funcname, f.filename, None if f.location is None else f.location[0]) for f in frames
        )
        found = self.stacks.get(key)
        if found is None:
            found = len(self.stacks)
            self.stacks[key] = found
            # CPython's own filter, asked frame by frame (it drops frames, keeping the rest in order).
            hidden = [i for i, f in enumerate(frames) if not filter_internal_frames([f])]
            emit({"k": found, "f": [list(frame) for frame in key], "h": hidden})
        return found

    def collect(self, stack_frames, timestamps_us=None):
        self.collapsed.collect(stack_frames, timestamps_us)
        for interp in stack_frames:
            for thread in interp.threads:
                emit({
                    "t": str(thread.thread_id),
                    "i": interp.interpreter_id,
                    "s": self.stack_id(thread.frame_info),
                    "st": thread.status,
                    "ts": [t if t < SAFE else str(t) for t in timestamps_us],
                })

    def export(self, filename=None):
        pass


for path in sys.argv[1:]:
    error = None
    try:
        reader = _remote_debugging.BinaryReader(path)
    except Exception as e:  # refused at open
        emit({"file": path, "info": None})
        emit({"end": path, "error": str(e)})
        continue
    try:
        info = reader.get_info()
        emit({"file": path, "info": plain(info)})
        collector = Collector(info["sample_interval_us"])
        reader.replay(collector)
        emit({"collapsed": [
            [[list(f) for f in tree], str(thread), count]
            for (tree, thread), count in collector.collapsed.stack_counter.items()
        ]})
    except Exception as e:
        error = str(e)
    finally:
        reader.close()
    emit({"end": path, "error": error})
    out.flush()
