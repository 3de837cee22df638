#!/usr/bin/env python3
"""Stalled cells (session 25): stalls.py DIR BUILD... -> per provider and build, how many of the
(size, run) latency cells read more than 3x the fastest run of that size (any build), and how many
more than 20x (the 2 ms-per-iteration lock-step)."""
import json, sys, glob, os, collections
d, builds = sys.argv[1], sys.argv[2:]
for p in sorted({os.path.basename(f).split("-")[1] for f in glob.glob(f"{d}/lat-*.json")}):
    cells = collections.defaultdict(list)  # (build, size) -> values
    for b in builds:
        for f in sorted(glob.glob(f"{d}/lat-{p}-{b}-r*.json")):
            for r in json.load(open(f))["results"]:
                cells[(b, r["size"])].append(r["latency_us"])
    best = {}
    for (b, s), v in cells.items():
        best[s] = min(best.get(s, float("inf")), min(v))
    for b in builds:
        n = slow = lock = 0
        for (bb, s), v in cells.items():
            if bb != b: continue
            n += len(v)
            slow += sum(x > 3 * best[s] for x in v)
            lock += sum(x > 20 * best[s] for x in v)
        print(f"{p} {b}: {n} cells, {slow} above 3x the fastest, {lock} above 20x")
