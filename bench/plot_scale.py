#!/usr/bin/env python3
"""Plots how mpix's costs grow (issue 14): bench/mpix_scale's two sweeps and, optionally, the
8-byte latency of mpix_latency runs with 2, 4, 8 ranks sharing one GPU.

usage: plot_scale.py OUT.png INFLIGHT.json STREAMS.json [LATENCY.json ...]

INFLIGHT.json / STREAMS.json come from `mpix_scale --sweep inflight|streams --json F`. Each
LATENCY.json (from `mpix_latency --json F`, any number of ranks) adds one point at its rank
count to the line of its mode and buffers (the first size, 8 B, is plotted).
"""
import json
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLUMNS = [("send_ns", "host per Isend"), ("recv_ns", "host per Irecv"),
           ("wait_ns", "host per Waitall request"), ("drain_ns", "drain per op")]


def load(path):
    with open(path) as f:
        return json.load(f)


def sweep_panel(ax, data, xkey, xlabel):
    xs = [r[xkey] for r in data["results"]]
    for key, label in COLUMNS:
        ax.plot(xs, [max(r[key], 1.0) for r in data["results"]], marker="o", markersize=3,
                label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("ns")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    out, inflight, streams, lat = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    panels = 3 if lat else 2
    fig, axes = plt.subplots(1, panels, figsize=(5 * panels, 4.2))
    d = load(inflight)
    sweep_panel(axes[0], d, "in_flight", "ops in flight (each kind, one stream)")
    axes[0].set_title("ops in flight (%s, %d ranks)" % (d.get("date", "?")[:10], d["ranks"]))
    d = load(streams)
    sweep_panel(axes[1], d, "streams", "stream communicators in one process")
    axes[1].set_title("streams (%d sends + receives each per round)" % d["per_stream"])
    if lat:
        lines = defaultdict(list)
        for p in lat:
            d = load(p)
            lines["%s, %s" % (d["mode"], d.get("buffers", "?"))].append(
                (d["ranks"], d["results"][0]["latency_us"]))
        for label, pts in sorted(lines.items()):
            pts.sort()
            axes[2].plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        axes[2].set_xlabel("ranks sharing one GPU (pairs ping-pong at once)")
        axes[2].set_ylabel("one-way latency, 8 B, slowest pair (us)")
        axes[2].set_title("ranks on one GPU under MPS")
        axes[2].set_xticks(sorted({p[0] for v in lines.values() for p in v}))
        axes[2].grid(True, alpha=0.3)
        axes[2].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print("wrote", out)


if __name__ == "__main__":
    main()
