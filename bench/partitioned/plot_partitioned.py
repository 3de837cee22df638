#!/usr/bin/env python3
"""Plots and tabulates bench/mpix_partitioned results.

usage: plot_partitioned.py LATENCY.json STAGGERED.json [STAGGERED2.json ...] --png OUT.png
Prints markdown tables (for docs/results-partitioned.md) to stdout.
"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    with open(path) as f:
        return json.load(f)


def human(b):
    for unit in ("B", "KiB", "MiB"):
        if b < 1024:
            return f"{b:g} {unit}"
        b /= 1024
    return f"{b:g} GiB"


def table(data, modes):
    rows = data["results"]
    sizes = sorted({r["bytes"] for r in rows})
    parts = sorted({r["partitions"] for r in rows})
    get = {(r["mode"], r["partitions"], r["bytes"]): r for r in rows}
    out = []
    for mode in modes:
        out.append(f"\n**{mode}**, one-way time (µs)"
                   + (", mean device `MPIX_Pready` cost (ns) in brackets" if mode == "partitioned" else "")
                   + "\n")
        out.append("| partitions | " + " | ".join(human(s) for s in sizes) + " |")
        out.append("|---:|" + "---:|" * len(sizes))
        for p in parts:
            cells = []
            for s in sizes:
                r = get.get((mode, p, s))
                if not r:
                    cells.append("–")
                elif mode == "partitioned" and r["pready_ns"] > 0:
                    cells.append(f"{r['oneway_us']:.1f} [{r['pready_ns']:.0f}]")
                else:
                    cells.append(f"{r['oneway_us']:.1f}")
            out.append(f"| {p} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def speedups(data):
    rows = data["results"]
    get = {(r["mode"], r["partitions"], r["bytes"]): r["oneway_us"] for r in rows}
    sizes = sorted({r["bytes"] for r in rows})
    parts = sorted({r["partitions"] for r in rows})
    out = [f"\nStaggered compute {data['compute_us']:.0f} µs: speedup of kernel-triggered "
           "partitioned sending over compute-then-send (`enqueue` / `mpi-sync`), same kernel\n",
           "| partitions | " + " | ".join(human(s) for s in sizes) + " |",
           "|---:|" + "---:|" * len(sizes)]
    for p in parts:
        cells = []
        for s in sizes:
            pt = get.get(("partitioned", p, s))
            en = get.get(("enqueue", p, s))
            ms = get.get(("mpi-sync", p, s))
            if pt and en and ms:
                cells.append(f"{en / pt:.2f}× / {ms / pt:.2f}×")
            else:
                cells.append("–")
        out.append(f"| {p} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("latency")
    ap.add_argument("staggered", nargs="+")
    ap.add_argument("--png", required=True)
    a = ap.parse_args()
    lat = load(a.latency)
    stag = [load(p) for p in a.staggered]

    fig, axes = plt.subplots(1, 1 + len(stag), figsize=(6 * (1 + len(stag)), 4.5))
    ax = axes[0]
    rows = lat["results"]
    for mode, parts, style in (("partitioned", 1, "-o"), ("partitioned", 8, "-s"),
                               ("partitioned", 64, "-^"), ("enqueue", 1, "--o"),
                               ("mpi-sync", 1, ":o")):
        pts = sorted((r["bytes"], r["oneway_us"]) for r in rows
                     if r["mode"] == mode and r["partitions"] == parts)
        if pts:
            label = f"{mode}, {parts} partition{'s' if parts > 1 else ''}" if mode == "partitioned" \
                else f"{mode} (1 block)"
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("one-way time (µs)")
    ax.set_title("kernel start → message arrived, no compute")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    for ax, d in zip(axes[1:], stag):
        rows = d["results"]
        big = max(r["bytes"] for r in rows)
        for mode, style in (("partitioned", "-o"), ("enqueue", "--s"), ("mpi-sync", ":^")):
            pts = sorted((r["partitions"], r["oneway_us"]) for r in rows
                         if r["mode"] == mode and r["bytes"] == big)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=mode)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("partitions (= blocks of the compute kernel)")
        ax.set_ylabel("one-way time (µs)")
        ax.set_title(f"{human(big)}, compute {d['compute_us']:.0f} µs finishing staggered")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"mpix_partitioned on {lat.get('device', '?')}, {lat.get('date', '')}")
    fig.tight_layout()
    fig.savefig(a.png, dpi=110)

    print(table(lat, ["partitioned", "enqueue", "mpi-sync"]))
    for d in stag:
        print(speedups(d))
        print(table(d, ["partitioned", "enqueue", "mpi-sync"]))


if __name__ == "__main__":
    main()
