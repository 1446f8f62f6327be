"""Per-sample (thread, time, stack) of Tachyon files, as CPython 3.15's own reader replays them.

Runs under the interpreter ../shared/tools/cpython315/install.sh prints. argv: the files. Writes JSON
lines to stdout as it replays (never a list of samples in memory: a 1 M-sample file stays small):
  {"file": path, "info": BinaryReader.get_info()}               first, per file
  {"k": id, "f": [[funcname, filename, lineno], ...]}           a stack the first time it is seen (innermost first)
  {"t": "thread_id", "i": interpreter_id, "s": id, "st": status, "ts": [timestamp_us, ...]}   one collect() thread
  {"end": path, "error": null | "message"}                      last, per file
"""
import json
import sys

import _remote_debugging

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
    def __init__(self):
        self.stacks = {}

    def stack_id(self, frames):
        key = tuple(
            (f.funcname, f.filename, None if f.location is None else f.location[0]) for f in frames
        )
        found = self.stacks.get(key)
        if found is None:
            found = len(self.stacks)
            self.stacks[key] = found
            emit({"k": found, "f": [list(frame) for frame in key]})
        return found

    def collect(self, stack_frames, timestamps_us=None):
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
        emit({"file": path, "info": plain(reader.get_info())})
        reader.replay(Collector())
    except Exception as e:
        error = str(e)
    finally:
        reader.close()
    emit({"end": path, "error": error})
    out.flush()
