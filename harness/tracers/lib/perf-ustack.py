# perf-ustack.py — `perf script -s` of the perf adapter (harness/tracers/perf)
# for --ustack: one line per sample, in perf script's order,
#   PID TID [FRAME,...]
# each frame as probecheck prints it (harness/tracers/README.md, ustack):
# the callchain's address as perf recorded it, and perf's own symbol,
# offset and object for it; null where perf resolved none.  The text
# output (perf script -F) prints callchain addresses relative to their
# object, which no one can check against the traced program's runtime
# addresses: this script sees the recorded ones.
import json
import sys


def frame(node):
    sym = node.get("sym") or {}
    dso = node.get("dso")
    if dso in (None, "", "[unknown]"):
        dso = None
    return {"addr": "0x%x" % node["ip"], "obj": dso,
            "sym": sym.get("name"),
            "off": node.get("sym_off") if sym.get("name") else None}


def trace_unhandled(event_name, context, fields, sample_dict):
    s = sample_dict.get("sample", {})
    chain = [frame(n) for n in sample_dict.get("callchain", [])]
    sys.stdout.write("%d %d %s\n" % (s.get("pid", -1), s.get("tid", -1),
                                     json.dumps(chain, separators=(",", ":"))))
