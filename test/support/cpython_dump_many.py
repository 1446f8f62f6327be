"""Dumps many Tachyon files through CPython 3.15's own reader, one JSON line each.

Runs under the interpreter that ../shared/tools/cpython315/install.sh prints.
Uses that folder's tachyon_dump.py for the dump (the vectors' shape) and adds
the progress_callback calls of a second replay. argv: the tools folder, then
a file holding one path per line.
"""
import json
import sys

sys.path.insert(0, sys.argv[1])
import tachyon_dump  # noqa: E402
import _remote_debugging  # noqa: E402


class _Quiet:
    def collect(self, stack_frames, timestamps_us=None):
        pass


def progress_of(path):
    calls = []
    try:
        reader = _remote_debugging.BinaryReader(path)
    except Exception:
        return calls
    try:
        reader.replay(_Quiet(), lambda cur, total: calls.append([cur, total]))
    except Exception:
        pass
    finally:
        reader.close()
    return calls


with open(sys.argv[2]) as fh:
    paths = [line.strip() for line in fh if line.strip()]
for path in paths:
    result = tachyon_dump.dump(path)
    result.pop("layout", None)
    result["progress"] = progress_of(path)
    sys.stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
