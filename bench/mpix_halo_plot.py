#!/usr/bin/env python3
"""Plots mpix_halo JSON results: time per iteration of each variant (top) and the speedup
of mpix (and mpix partitioned, where measured) over classic (bottom) against the per-rank block
size.

usage: mpix_halo_plot.py OUT.png RESULT.json[=LABEL] [RESULT.json[=LABEL] ...]
Each JSON file (from `mpix_halo --json`) becomes one line per variant, labelled LABEL or by its
device and where its halo buffers were; a dotted line shows the mpix variant's host busy time
per iteration (what enqueueing costs the host thread), where the file has it.
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(arg):
    path, _, label = arg.partition("=")
    with open(path) as f:
        d = json.load(f)
    by, host = {}, {}
    for r in d["results"]:
        by.setdefault(r["variant"], {})[r["n"]] = r["median_us"]
        if r["variant"] == "mpix" and "host_busy_us" in r:
            host[r["n"]] = r["host_busy_us"]
    if not label:
        label = f'{d["device"]}, {d["ranks"]} ranks'
        if "halo_buffers" in d:
            label += f', halos in {d["halo_buffers"]} memory'
    return d, by, host, label


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, paths = sys.argv[1], sys.argv[2:]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 7), sharex=True,
                                      gridspec_kw={"height_ratios": [2, 1]})
    for path in paths:
        d, by, host, label = load(path)
        ns = sorted(set(by.get("classic", {})) & set(by.get("mpix", {})))
        mpix_line = None
        for variant, style in (("classic", "o--"), ("mpix", "s-"), ("partitioned", "^-.")):
            if variant not in by:
                continue
            (line,) = top.plot(ns, [by[variant][n] for n in ns], style,
                               label=f"{variant}: {label}")
            if variant == "mpix":
                mpix_line = line
        if host:
            top.plot(ns, [host[n] for n in ns], ":", color=mpix_line.get_color(),
                     label=f"mpix host busy: {label}")
        for variant, style in (("mpix", "d-"), ("partitioned", "^-.")):
            if variant in by:
                bottom.plot(ns, [by["classic"][n] / by[variant][n] for n in ns], style,
                            label=f"{variant}: {label}")
    top.set_xscale("log", base=2)
    top.set_yscale("log")
    top.set_ylabel("time per iteration (µs, median)")
    top.grid(True, which="both", alpha=0.3)
    top.legend(fontsize=7)
    top.set_title("Jacobi with halo exchange: classic MPI vs. mpix (enqueued, partitioned)")
    bottom.axhline(1.0, color="gray", lw=1)
    bottom.axhline(1.3, color="gray", lw=1, ls=":")
    bottom.set_xlabel("block per rank (n x n)")
    bottom.set_ylabel("speedup over classic")
    bottom.grid(True, which="both", alpha=0.3)
    bottom.legend(fontsize=8)
    ns_all = sorted({n for p in paths for n in load(p)[1].get("mpix", {})})
    bottom.set_ylim(0, max(1.4, bottom.get_ylim()[1]))
    bottom.set_xticks(ns_all)
    bottom.set_xticklabels([f"{n}²" for n in ns_all], rotation=45)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


if __name__ == "__main__":
    main()
