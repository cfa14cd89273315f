#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Turn the output of a `make bench` VM run into the benchmark's table.

Reads the lines vfio-bench printed in the guest (BENCH <backend> <row>
<metric> <rep> <value>, ERROR ..., BENCH-PHASE ...), takes the median of
the repetitions, and writes into OUTDIR:

  results.csv        one line per row/metric: ours, in-kernel, ratio,
                     then modern and its ratio to in-kernel
  results.json       the same plus every repetition and the targets
  mapping-cost.dat   row 3 per-op cost by mapping count (gnuplot input)
  mapping-cost.gp    the gnuplot script that makes mapping-cost.png

Backends: "ours" is our module through the seed ABI, "intree" the
kernel's own VFIO, "modern" our module through the container ABI with the
same program code as "intree".  It prints the table (ours and modern, each
against in-kernel) and the benchmark's targets (the figures ours must
reach, against the in-kernel VFIO or its own other rows).  Exit status: 0
when all three backends produced every measurement, 1 otherwise (a missed
target is reported, not an error).
"""

import argparse
import csv
import json
import os
import re
import statistics
import sys

BACKENDS = ("ours", "intree", "modern")

# (row, metric, unit, label, higher_is_better)
MAIN_ROWS = [
    ("map4k", "gib_s", "GiB/s", "1 MAP+UNMAP 1 GiB, 4 KiB pages", True),
    ("maphuge", "gib_s", "GiB/s", "2 MAP+UNMAP 1 GiB, 2 MiB hugetlbfs", True),
]
TAIL_ROWS = [
    ("msi", "p50_us", "us", "4 MSI round trip p50", False),
    ("msi", "p99_us", "us", "4 MSI round trip p99", False),
    ("msi-remote", "p50_us", "us", "4b MSI, reader on other CPU p50", False),
    ("msi-remote", "p99_us", "us", "4b MSI, reader on other CPU p99", False),
    ("bar0", "mmap_ops_s", "ops/s", "5 BAR0 read, mmap load", True),
    ("bar0", "pread_ops_s", "ops/s", "5 BAR0 read, pread", True),
]
EXTRA_METRICS = [
    ("map4k", "map_ms", "ms", "1 (map part of row 1)", False),
    ("map4k", "unmap_ms", "ms", "1 (unmap part of row 1)", False),
    ("maphuge", "map_ms", "ms", "2 (map part of row 2)", False),
    ("maphuge", "unmap_ms", "ms", "2 (unmap part of row 2)", False),
]

BENCH_RE = re.compile(r"^BENCH (\S+) (\S+) (\S+) (\d+) (\S+)\s*$")


def parse(path):
    reps = {}       # (backend, row, metric) -> [values]
    errors = []
    phases = {}
    problems = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = BENCH_RE.match(line)
            if m:
                b, row, metric, _, value = m.groups()
                try:
                    reps.setdefault((b, row, metric), []).append(
                        float(value))
                except ValueError:
                    errors.append(f"unparsable: {line}")
                continue
            if line.startswith("BENCH-PHASE "):
                parts = line.split()
                if len(parts) >= 3:
                    phases.setdefault(parts[1], []).append(parts[2])
            elif line.startswith("ERROR "):
                errors.append(line[len("ERROR "):])
            elif line.startswith("not ok - "):
                problems.append(line[len("not ok - "):])
    return reps, errors, phases, problems


def med(reps, b, row, metric):
    v = reps.get((b, row, metric))
    return statistics.median(v) if v else None


def many_counts(reps):
    counts = set()
    for (_, row, _) in reps:
        if row.startswith("many-"):
            counts.add(int(row[len("many-"):]))
    return sorted(counts)


def table_rows(reps):
    rows = list(MAIN_ROWS)
    for n in many_counts(reps):
        rows.append((f"many-{n}", "map_ns", "ns/op",
                     f"3 {n} x 4 KiB: map", False))
        rows.append((f"many-{n}", "unmap_ns", "ns/op",
                     f"3 {n} x 4 KiB: unmap", False))
    rows += TAIL_ROWS
    return rows


def fmt(v):
    if v is None:
        return "-"
    if v >= 1e6:
        return f"{v:.3g}"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def csv_num(v, spec):
    return "" if v is None else format(v, spec)


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def targets(reps):
    """The benchmark's targets: (name, holds or None, detail)."""
    out = []

    def m(b, row, metric):
        return med(reps, b, row, metric)

    def add(name, value, limit, ge, detail):
        if value is None:
            out.append((name, None, detail + ": not measured"))
            return
        holds = value >= limit if ge else value <= limit
        op = ">=" if ge else "<="
        out.append((name, holds,
                    f"{detail} = {value:.2f} (target {op} {limit:g})"))

    for row, label in (("map4k", "row 1"), ("maphuge", "row 2")):
        add(f"{label} ours >= 1.0x in-kernel",
            ratio(m("ours", row, "gib_s"), m("intree", row, "gib_s")),
            1.0, True, f"{label} ours/in-kernel GiB/s")
    add("row 2 >= 8x row 1 (ours)",
        ratio(m("ours", "maphuge", "gib_s"), m("ours", "map4k", "gib_s")),
        8.0, True, "ours hugetlbfs/4 KiB GiB/s")
    counts = many_counts(reps)
    if counts:
        lo, hi = counts[0], counts[-1]
        for op in ("map", "unmap"):
            add(f"row 3 ours {op}: cost at {hi} <= 2x cost at {lo}",
                ratio(m("ours", f"many-{hi}", f"{op}_ns"),
                      m("ours", f"many-{lo}", f"{op}_ns")),
                2.0, False, f"ours {op} ns/op {hi}/{lo}")
    else:
        out.append(("row 3 ours: cost at 100k <= 2x cost at 1k", None,
                    "row 3 not measured"))
    for p in ("p50", "p99"):
        add(f"row 4 {p}: ours <= 1.1x in-kernel latency",
            ratio(m("ours", "msi", f"{p}_us"), m("intree", "msi", f"{p}_us")),
            1.1, False, f"MSI {p} ours/in-kernel")
    add("row 5 ours: mmap >= 10x pread",
        ratio(m("ours", "bar0", "mmap_ops_s"),
              m("ours", "bar0", "pread_ops_s")),
        10.0, True, "ours mmap/pread ops/s")
    return out


def write_outputs(outdir, reps, rows, tg, meta):
    with open(os.path.join(outdir, "results.csv"), "w", newline="",
              encoding="utf-8") as f:
        w = csv.writer(f)
        # The modern columns come last: readers of the older file keep
        # finding theirs where they were.
        w.writerow(["row", "metric", "unit", "ours", "intree",
                    "ratio_ours_intree", "ours_reps", "intree_reps",
                    "modern", "ratio_modern_intree", "modern_reps"])
        for row, metric, unit, _, _ in rows + EXTRA_METRICS:
            o = med(reps, "ours", row, metric)
            i = med(reps, "intree", row, metric)
            m = med(reps, "modern", row, metric)
            w.writerow([row, metric, unit, csv_num(o, ".6g"),
                        csv_num(i, ".6g"), csv_num(ratio(o, i), ".4f"),
                        len(reps.get(("ours", row, metric), [])),
                        len(reps.get(("intree", row, metric), [])),
                        csv_num(m, ".6g"), csv_num(ratio(m, i), ".4f"),
                        len(reps.get(("modern", row, metric), []))])
    doc = {
        "meta": meta,
        "rows": [
            {
                "row": row, "metric": metric, "unit": unit, "label": label,
                "ours": med(reps, "ours", row, metric),
                "intree": med(reps, "intree", row, metric),
                "ratio_ours_intree": ratio(med(reps, "ours", row, metric),
                                           med(reps, "intree", row, metric)),
                "ours_reps": reps.get(("ours", row, metric), []),
                "intree_reps": reps.get(("intree", row, metric), []),
                "modern": med(reps, "modern", row, metric),
                "ratio_modern_intree": ratio(
                    med(reps, "modern", row, metric),
                    med(reps, "intree", row, metric)),
                "modern_reps": reps.get(("modern", row, metric), []),
            }
            for row, metric, unit, label, _ in rows + EXTRA_METRICS
        ],
        "targets": [{"target": n, "holds": h, "detail": d}
                    for n, h, d in tg],
    }
    with open(os.path.join(outdir, "results.json"), "w",
              encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")

    counts = many_counts(reps)
    cols = [(b, op) for b in BACKENDS for op in ("map", "unmap")]
    with open(os.path.join(outdir, "mapping-cost.dat"), "w",
              encoding="utf-8") as f:
        f.write("# count " + " ".join(f"{b}_{op}_ns" for b, op in cols) +
                "\n")
        for n in counts:
            vals = [med(reps, b, f"many-{n}", f"{op}_ns") for b, op in cols]
            f.write(f"{n} " + " ".join("NaN" if v is None else f"{v:.1f}"
                                       for v in vals) + "\n")
    titles = {"ours": "ours", "intree": "in-kernel type1",
              "modern": "ours, container ABI"}
    styles = {("ours", "map"): "lc rgb '#1f5fbf' lw 2 pt 7 dt 1",
              ("ours", "unmap"): "lc rgb '#1f5fbf' lw 2 pt 5 dt 2",
              ("intree", "map"): "lc rgb '#d0501f' lw 2 pt 7 dt 1",
              ("intree", "unmap"): "lc rgb '#d0501f' lw 2 pt 5 dt 2",
              ("modern", "map"): "lc rgb '#2f9f3f' lw 2 pt 7 dt 1",
              ("modern", "unmap"): "lc rgb '#2f9f3f' lw 2 pt 5 dt 2"}
    plots = ", \\\n     ".join(
        f"'mapping-cost.dat' using 1:{k + 2} with linespoints "
        f"{styles[c]} title '{titles[c[0]]} {c[1]}'"
        for k, c in enumerate(cols))
    with open(os.path.join(outdir, "mapping-cost.gp"), "w",
              encoding="utf-8") as f:
        f.write(f"""# Made by tests/bench/report.py; run in {outdir}.
set terminal {meta['terminal']} size 900,600 font ',11'
set output 'mapping-cost.png'
set title "Per-op cost of separate 4 KiB DMA mappings (QEMU TCG, one boot)"
set xlabel 'mappings in the container'
set ylabel 'mean ns per MAP\\_DMA / UNMAP\\_DMA'
set logscale x
set xtics ({", ".join(f"'{n // 1000}k' {n}" if n >= 1000 else f"'{n}' {n}" for n in counts)})
set yrange [0:*]
set grid
set key top left box opaque
plot {plots}
""")


def print_rows(reps, rows, b):
    """One table line per row: backend b, in-kernel, their ratio."""
    for row, metric, unit, label, _ in rows:
        o = med(reps, b, row, metric)
        i = med(reps, "intree", row, metric)
        r = ratio(o, i)
        print(f"{label:40} {unit:7} {fmt(o):>10} {fmt(i):>10} "
              f"{'-' if r is None else f'{r:.2f}':>7}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log", help="the VM run's output")
    ap.add_argument("outdir")
    ap.add_argument("--terminal", default="pngcairo")
    ap.add_argument("--meta", action="append", default=[],
                    help="key=value recorded in results.json")
    a = ap.parse_args()

    reps, errors, phases, problems = parse(a.log)
    rows = table_rows(reps)
    tg = targets(reps)
    meta = dict(kv.split("=", 1) for kv in a.meta if "=" in kv)
    meta["terminal"] = a.terminal
    meta["errors"] = errors
    meta["vm_problems"] = problems
    meta["phases"] = phases
    write_outputs(a.outdir, reps, rows, tg, meta)

    print()
    print("Medians of the repetitions; ratio = ours / in-kernel "
          "(for latency and ns rows lower is better).")
    hdr = f"{'row':40} {'unit':7} {'ours':>10} {'in-kernel':>10} {'ratio':>7}"
    print(hdr)
    print("-" * len(hdr))
    print_rows(reps, rows, "ours")
    print()
    print("Our module through the container ABI (the in-kernel run's code); "
          "ratio = modern / in-kernel.")
    print(f"{'row':40} {'unit':7} {'modern':>10} {'in-kernel':>10} "
          f"{'ratio':>7}")
    print("-" * len(hdr))
    print_rows(reps, rows, "modern")
    for b in BACKENDS:
        r = ratio(med(reps, b, "bar0", "mmap_ops_s"),
                  med(reps, b, "bar0", "pread_ops_s"))
        if r is not None:
            print(f"{'5 mmap/pread (' + b + ')':40} {'x':7} {r:10.1f}")
    print()
    print("Targets:")
    for name, holds, detail in tg:
        word = "HOLDS" if holds else ("MISSED" if holds is False else "N/A")
        print(f"  {word:6} {name}: {detail}")

    complete = True
    for row, metric, _, _, _ in rows:
        for b in BACKENDS:
            if (b, row, metric) not in reps:
                complete = False
    if errors or problems or not complete:
        print()
        print("Problems:")
        for e in errors:
            print(f"  ERROR {e}")
        for p in problems:
            print(f"  vm: {p}")
        for b in BACKENDS:
            bad = [rc for rc in phases.get(b, ["none"]) if rc != "0"]
            if bad:
                print(f"  backend {b}: exit status {' '.join(bad)}")
        if not complete:
            print("  some measurements are missing (see above)")
    # The guest command's exit status repeats what the ERROR lines say;
    # anything else (a kernel WARNING, a harness failure) fails the run.
    fatal = [p for p in problems if not p.startswith("vm/guest command")]
    return 0 if complete and not errors and not fatal else 1


if __name__ == "__main__":
    sys.exit(main())
