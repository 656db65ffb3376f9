#!/usr/bin/env python3
"""Writes a sweep file derived from a study sweep (platform/sweeps/*.json) for rnic-sweep.

  tools/derive-sweep.py SRC DST [--large] [--current]

--large    seeds 1..5 and four times the RDMA Writes per run (on the axis that gives them, else in
           "set"); the name gets "-large".
--current  the model keys the study sweeps pin (the transmitter and the booking order) are removed
           from "set", so the runs take the current defaults; an axis over one of them stays. The
           name gets "-current".
Comment lines (//) of SRC are dropped. tools/run-study.sh uses it for --large and --current.
"""
import argparse
import json

# The keys each study sweep pins to the model it was measured with (2026-11-29).
PINNED_MODEL_KEYS = ("rnic.tcp.tx_order", "link.order", "rnic.tcp.tx_interval_cycles",
                     "simulation.resource_order", "rnic.tcp.tx_ahead_frames")


def scale_iterations(axis):
    """Multiplies workload.iterations by 4 on `axis` (or its zipped parts); True if it was there."""
    found = axis.get("key") == "workload.iterations"
    if found:
        axis["values"] = [4 * int(v) for v in axis["values"]]
    for part in axis.get("zip", []):
        found = scale_iterations(part) or found
    return found


def derive(sweep, large, current):
    if current:
        sweep["name"] += "-current"
        for key in PINNED_MODEL_KEYS:
            sweep.get("set", {}).pop(key, None)
    if large:
        sweep["name"] += "-large"
        sweep["seeds"] = [1, 2, 3, 4, 5]
        # A key may not be in "set" and on an axis at once: scale it where it is.
        on_axis = [scale_iterations(axis) for axis in sweep.get("axes", [])]
        if not any(on_axis):
            sweep.setdefault("set", {})
            sweep["set"]["workload.iterations"] = 4 * int(sweep["set"].get("workload.iterations", 2000))
    return sweep


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--large", action="store_true")
    ap.add_argument("--current", action="store_true")
    args = ap.parse_args()
    with open(args.src) as f:
        text = "\n".join(line for line in f if not line.lstrip().startswith("//"))
    sweep = derive(json.loads(text), args.large, args.current)
    with open(args.dst, "w") as f:
        json.dump(sweep, f, indent=1)


if __name__ == "__main__":
    main()
