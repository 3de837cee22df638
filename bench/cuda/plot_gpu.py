#!/usr/bin/env python3
"""Plots the GPU benchmark JSON of mpix_latency / mpix_bw (-d cuda): one line per mode,
against the message size, log-log.

usage: plot_gpu.py OUT.png TITLE RESULT.json [RESULT.json ...]
Each JSON file (from `mpix_latency --json` or `mpix_bw --json`) becomes one line, labelled by
its mode (and "kernel writes" when the file name says writekernel).
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    out, title, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
    fig, ax = plt.subplots(figsize=(8, 5))
    metric = None
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        metric = d["metric"]
        xs = [r["size"] for r in d["results"]]
        ys = [r[metric] for r in d["results"]]
        label = d["mode"] + (" (kernel writes)" if "writekernel" in os.path.basename(p) else "")
        if len({json.load(open(q)).get("buffers") for q in paths}) > 1:
            label += ", " + d.get("buffers", "?")  # several placements in one plot
        ax.plot(xs, ys, marker="o", markersize=3, label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("one-way latency (us)" if metric == "latency_us" else "bandwidth (MB/s)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
