#!/usr/bin/env python3
"""Medians of three runs per build (sessions 24, 25): table.py DIR BUILD... -> markdown rows.
Cells: median (min-max) per build over its runs, then the ratio of the last build's median to the first's."""
import json, statistics, sys, glob, os
d, builds = sys.argv[1], sys.argv[2:]
sizes = [int(x) for x in os.environ.get("SIZES", "8 4096 16384 65536 1048576").split()]
for bench, metric in (("lat", "latency_us"), ("bw", "bandwidth_MBps")):
    provs = sorted({os.path.basename(f).split("-")[1] for f in glob.glob(f"{d}/{bench}-*.json")})
    for p in provs:
        print(f"\n{bench} {p}: " + " | ".join(builds) + " | last/first")
        for s in sizes:
            meds, cells = [], []
            for b in builds:
                v = []
                for f in sorted(glob.glob(f"{d}/{bench}-{p}-{b}-r*.json")):
                    for r in json.load(open(f))["results"]:
                        if r["size"] == s: v.append(r[metric])
                if not v: cells.append("-"); meds.append(None); continue
                m = statistics.median(v); meds.append(m)
                cells.append(f"{m:.3g} ({min(v):.3g}-{max(v):.3g})")
            ratio = f"{meds[-1]/meds[0]:.2f}" if meds[0] and meds[-1] else "-"
            print(f"| {s} | " + " | ".join(cells) + f" | {ratio} |")
