#!/usr/bin/env python3
"""Plots mpix_halo JSON results: time per iteration of both variants (top) and the speedup
of mpix over classic (bottom) against the per-rank block size.

usage: mpix_halo_plot.py OUT.png RESULT.json [RESULT.json ...]
Each JSON file (from `mpix_halo --json`) becomes one pair of lines, labelled by its device and
host.
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    with open(path) as f:
        d = json.load(f)
    by = {}
    for r in d["results"]:
        by.setdefault(r["variant"], {})[r["n"]] = r["median_us"]
    return d, by


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, paths = sys.argv[1], sys.argv[2:]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 7), sharex=True,
                                      gridspec_kw={"height_ratios": [2, 1]})
    for path in paths:
        d, by = load(path)
        label = f'{d["device"]} ({d["host"]}, {d["ranks"]} ranks)'
        ns = sorted(set(by.get("classic", {})) & set(by.get("mpix", {})))
        for variant, style in (("classic", "o--"), ("mpix", "s-")):
            top.plot(ns, [by[variant][n] for n in ns], style, label=f"{variant}, {label}")
        bottom.plot(ns, [by["classic"][n] / by["mpix"][n] for n in ns], "d-", label=label)
    top.set_xscale("log", base=2)
    top.set_yscale("log")
    top.set_ylabel("time per iteration (µs, median)")
    top.grid(True, which="both", alpha=0.3)
    top.legend(fontsize=8)
    top.set_title("Jacobi with halo exchange: classic MPI vs. mpix")
    bottom.axhline(1.0, color="gray", lw=1)
    bottom.axhline(1.3, color="gray", lw=1, ls=":")
    bottom.set_xlabel("block per rank (n x n)")
    bottom.set_ylabel("speedup (classic / mpix)")
    bottom.grid(True, which="both", alpha=0.3)
    bottom.legend(fontsize=8)
    ns_all = sorted({n for p in paths for n in load(p)[1].get("mpix", {})})
    bottom.set_xticks(ns_all)
    bottom.set_xticklabels([f"{n}²" for n in ns_all], rotation=45)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


if __name__ == "__main__":
    main()
