#!/usr/bin/env python3
"""mpix_scale runs of halo_scale.sh (session 25): scale_table.py DIR -> per sweep and point,
old / head: range (min-max over the rounds) of send ns and drain per op ns."""
import glob, os, sys
d = sys.argv[1]
for sweep in ("inflight", "streams"):
    rows = {}
    for v in ("old", "head"):
        for f in sorted(glob.glob(f"{d}/scale_{sweep}-{v}-r*.txt")):
            for line in open(f):
                if line.startswith("#") or not line.strip(): continue
                x = line.split()
                rows.setdefault(int(x[0]), {}).setdefault(v, []).append((float(x[1]), float(x[4])))
    print(f"\n{sweep}: point | send ns old | send ns head | drain/op ns old | drain/op ns head")
    for k in sorted(rows):
        cells = []
        for i in (0, 1):
            for v in ("old", "head"):
                vals = [t[i] for t in rows[k].get(v, [])]
                cells.append(f"{min(vals):.0f}-{max(vals):.0f}" if vals else "-")
        print(f"| {k} | " + " | ".join(cells) + " |")
