#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Turn the output of a `make bench` VM run into the benchmark's table.

  report.py VM-OUTPUT OUTDIR [--terminal T] [--meta key=value ...]

Reads the lines printed in the guest (BENCH <backend> <row> <metric> <rep>
<value>, SKIP <backend> <row>: <why>, ERROR ..., BENCH-PHASE ...) and, for
every row and metric, takes the median, min and max of each backend's
repetitions.  Backends: "intree" (the kernel's type1 container) and
"iommufd" (the kernel's iommufd and device cdev) are the in-kernel paths;
"ours" is our module through the seed ABI, "container" our module through the
container ABI.  Any may be missing.  Ratios are against the best in-kernel
path of each row and metric (the faster of intree and iommufd there), so
that ours is held to whichever the kernel does best.

Writes into OUTDIR:
  results.csv, results.json   every row/metric, every backend
  results.dat, results.gp     bar chart results.png: ours and container / best
  mapping-cost.dat, .gp       row 3 per-op cost, mapping-cost.png
A .gp is written only when it has something to plot; run it in OUTDIR.

Exit status 0 when ours and an in-kernel backend ran and every backend
that ran measured every row it did not skip, without ERROR; a missed
target is reported, not an error.
"""

import argparse
import csv
import json
import os
import re
import statistics
import sys

BACKENDS = ("intree", "iommufd", "ours", "container")
INKERNEL = ("intree", "iommufd")
MAP_ROWS = ("map4k", "maphuge", "mapthp", "maphuge1g")
# Table order and labels; "many-N" rows sort by N under "many".
ROWS = {
    "map4k": "1 map+unmap, 4 KiB pages",
    "maphuge": "2 map+unmap, 2 MiB hugetlbfs",
    "mapthp": "2b map+unmap, 2 MiB THP",
    "maphuge1g": "2c map+unmap, 1 GiB hugetlbfs",
    "many": "3 {n} x 4 KiB, per op",
    "msi": "4 MSI round trip",
    "msi-remote": "4b MSI, reader on other CPU",
    "bar0": "5 BAR0 4-byte read",
    "testpmd": "6 testpmd forwarding",
}
METRICS = ("gib_s", "map_ms", "unmap_ms", "map_ns", "unmap_ns", "p50_us",
           "p99_us", "mmap_ops_s", "pread_ops_s", "pps")
UNITS = {"gib_s": "GiB/s", "map_ms": "ms", "unmap_ms": "ms",
         "map_ns": "ns/op", "unmap_ns": "ns/op", "p50_us": "us",
         "p99_us": "us", "mmap_ops_s": "ops/s", "pread_ops_s": "ops/s",
         "pps": "pkt/s"}

BENCH_RE = re.compile(r"^BENCH (\S+) (\S+) (\S+) (\d+) (\S+)\s*$")
SKIP_RE = re.compile(r"^SKIP (\S+) (\S+): (.*)$")


def higher_is_better(metric):
    """Rates (GiB/s, ops/s, packets/s) up, times (ms, ns, us) down."""
    return metric.endswith("_s") or metric == "pps"


def parse(path):
    reps = {}       # (backend, row, metric) -> [values]
    skips = {}      # (backend, row) -> why
    errors, problems, phases = [], [], {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = BENCH_RE.match(line)
            if m:
                b, row, metric, rep, value = m.groups()
                try:
                    reps.setdefault((b, row, metric), []).append(
                        (int(rep), float(value)))
                except ValueError:
                    errors.append(f"unparsable: {line}")
            elif (m := SKIP_RE.match(line)):
                skips[m.group(1), m.group(2)] = m.group(3)
            elif line.startswith("BENCH-PHASE "):
                parts = line.split()
                if len(parts) >= 3:
                    phases.setdefault(parts[1], []).append(parts[2])
            elif line.startswith("ERROR "):
                errors.append(line[len("ERROR "):])
            elif line.startswith("not ok - "):
                problems.append(line[len("not ok - "):])
    return reps, skips, errors, problems, phases


def row_key(row):
    base, _, n = row.partition("-")
    if base == "many" and n.isdigit():
        return (list(ROWS).index("many"), int(n), row)
    return (list(ROWS).index(row) if row in ROWS else len(ROWS), 0, row)


def label(row):
    if row.startswith("many-"):
        return ROWS["many"].format(n=row[len("many-"):])
    return ROWS.get(row, row)


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def paired(mine, best):
    """Median, min and max of the per-repetition ratios mine/best, taken
    between the repetitions of the same number: the backends alternate
    within a round, so a repetition's pair ran minutes apart and a change
    of the shared host's load hits both, where the ratio of medians mixes
    rounds."""
    b = dict(best)
    r = sorted(v / b[n] for n, v in mine if b.get(n))
    if not r:
        return None
    return {"median": statistics.median(r), "min": r[0], "max": r[-1],
            "n": len(r)}


def summarize(reps, skips):
    """One entry per (row, metric), in table order."""
    keys = {(row, metric) for (_, row, metric) in reps}
    # A mapping row every backend skipped still gets a line that says
    # so; other SKIPs (e.g. "SKIP iommufd setup: ...") are notes only.
    keys |= {(row, "gib_s") for (_, row) in skips
             if row in MAP_ROWS and not any(r == row for r, _ in keys)}
    out = []
    for row, metric in sorted(keys, key=lambda k: (
            row_key(k[0]), METRICS.index(k[1]) if k[1] in METRICS
            else len(METRICS), k[1])):
        hib = higher_is_better(metric)
        st = {}
        for b in BACKENDS:
            v = [x for _, x in reps.get((b, row, metric), [])]
            st[b] = v and {"median": statistics.median(v), "min": min(v),
                           "max": max(v), "n": len(v), "reps": v} or None
        ink = [b for b in INKERNEL if st[b]]
        best = ((max if hib else min)(ink, key=lambda b: st[b]["median"])
                if ink else None)
        bm = st[best]["median"] if best else None
        out.append({
            "row": row, "metric": metric, "label": label(row),
            "unit": UNITS.get(metric, ""), "higher_is_better": hib,
            "backends": st, "best_inkernel": best,
            "ratio_ours_best": ratio(st["ours"] and st["ours"]["median"], bm),
            "ratio_container_best": ratio(st["container"] and
                                       st["container"]["median"], bm),
            "paired_ours_best": best and paired(
                reps.get(("ours", row, metric), []),
                reps[best, row, metric]),
            "paired_container_best": best and paired(
                reps.get(("container", row, metric), []),
                reps[best, row, metric]),
            "skipped": {b: skips[b, row] for b in BACKENDS
                        if (b, row) in skips},
        })
    return out


def find(entries, row, metric):
    return next((e for e in entries
                 if e["row"] == row and e["metric"] == metric), None)


def med(e, b):
    return e and e["backends"][b] and e["backends"][b]["median"]


# Our two ABIs: the seed ABI (ours) and the container ABI (container) that
# QEMU and DPDK use.  DPDK speaks only the latter, so the testpmd row has
# no "ours".
OUR_ABIS = ("ours", "container")


def targets(entries):
    """The benchmark's targets for each of our ABIs: (name, holds or None,
    detail)."""
    out = []

    def add(name, e, b, value, limit, ge, what, spread=""):
        if value is None:
            why = e and e["skipped"].get(b)
            out.append((name, None, f"{what}: " +
                        (f"skipped ({why})" if why else "not measured")))
            return
        op = ">=" if ge else "<="
        out.append((name, value >= limit if ge else value <= limit,
                    f"{what} = {value:.3f}{spread} (target {op} "
                    f"{limit:g})"))

    # Judged by the median of the per-round ratios (paired()), shown with
    # their range: a target holds by a margin only where the range
    # stays on its side.
    def vs_best(e, b, limit, ge, unit, name):
        best = e and e["best_inkernel"] or "in-kernel"
        p = e and e[f"paired_{b}_best"]
        add(name, e, b, p and p["median"], limit, ge,
            f"{b}/{best} {unit}, median of {p['n'] if p else 0} rounds",
            p and f" [{p['min']:.3f}..{p['max']:.3f}]" or "")

    counts = sorted({int(e["row"][5:]) for e in entries
                     if e["row"].startswith("many-")})
    lo, hi = (counts[0], counts[-1]) if counts else (1000, 100000)
    for b in OUR_ABIS:
        # Every mapping row at least as fast as the best in-kernel path:
        # bandwidth for the big ones, cost per operation for row 3.
        for row in MAP_ROWS:
            e = find(entries, row, "gib_s")
            vs_best(e, b, 1.0, True, "GiB/s",
                    f"{label(row).split()[0]} {row}: {b} >= 1.0x best "
                    "in-kernel")
        for n in counts:
            for op in ("map", "unmap"):
                e = find(entries, f"many-{n}", f"{op}_ns")
                vs_best(e, b, 1.0, False, "ns/op",
                        f"3 {n} {op}: {b} cost <= best in-kernel")
        for op in ("map", "unmap"):
            e_lo, e_hi = (find(entries, f"many-{n}", f"{op}_ns")
                          for n in (lo, hi))
            add(f"3 {b} {op}: cost at {hi} <= 2x cost at {lo}", e_hi, b,
                ratio(med(e_hi, b), med(e_lo, b)), 2.0, False,
                f"{b} {op} ns/op, {hi}/{lo}")
        e = find(entries, "msi", "p50_us")
        vs_best(e, b, 1.1, False, "us",
                f"4 MSI p50: {b} <= 1.1x best in-kernel")
    e = find(entries, "testpmd", "pps")
    vs_best(e, "container", 0.95, True, "pps",
            "6 testpmd: container >= 0.95x best in-kernel pps")
    return out


def fmt(v):
    if v is None:
        return "-"
    if v >= 1e6:
        return f"{v / 1e6:.3g}M"
    if v >= 1e5:
        return f"{v / 1e3:.0f}k"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def cell(e, b, what="median"):
    s = e["backends"][b]
    if s:
        return fmt(s[what])
    return "skip" if b in e["skipped"] else "-"


def num(v):
    return "" if v is None else f"{v:.6g}"


def write_files(outdir, entries, tg, meta, present):
    with open(os.path.join(outdir, "results.csv"), "w", newline="",
              encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["row", "metric", "unit", "better"] +
                   [f"{b}{s}" for b in BACKENDS
                    for s in ("", "_min", "_max", "_reps")] +
                   ["best_inkernel", "ratio_ours_best", "ratio_container_best",
                    "skipped"])
        for e in entries:
            st = e["backends"]
            w.writerow([e["row"], e["metric"], e["unit"],
                        "higher" if e["higher_is_better"] else "lower"] +
                       [x for b in BACKENDS for x in (
                           (num(st[b]["median"]), num(st[b]["min"]),
                            num(st[b]["max"]), st[b]["n"]) if st[b]
                           else ("", "", "", 0))] +
                       [e["best_inkernel"] or "", num(e["ratio_ours_best"]),
                        num(e["ratio_container_best"]),
                        " ".join(sorted(e["skipped"]))])
    doc = {"meta": meta, "backends_present": present, "rows": entries,
           "targets": [{"target": n, "holds": h, "detail": d}
                       for n, h, d in tg]}
    with open(os.path.join(outdir, "results.json"), "w",
              encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    for name in ("results", "mapping-cost"):
        for ext in (".dat", ".gp"):
            p = os.path.join(outdir, name + ext)
            if os.path.exists(p):
                os.remove(p)
    plot_ratios(outdir, entries, meta["terminal"])
    plot_mapping_cost(outdir, entries, meta["terminal"])


def plot_ratios(outdir, entries, term):
    """ours and container / best in-kernel, one bar pair per row and metric."""
    # map_ms/unmap_ms are parts of the gib_s figure above them.
    es = [e for e in entries if e["metric"] not in ("map_ms", "unmap_ms")
          and (e["ratio_ours_best"] is not None or
               e["ratio_container_best"] is not None)]
    if not es:
        return
    with open(os.path.join(outdir, "results.dat"), "w",
              encoding="utf-8") as f:
        f.write("# row/metric ours/best container/best best-in-kernel\n")
        for e in es:
            better = ">1" if e["higher_is_better"] else "<1"
            f.write(f'"{e["row"]} {e["metric"]} [{better} better]" ' +
                    " ".join("NaN" if e[k] is None else f"{e[k]:.4f}"
                             for k in ("ratio_ours_best",
                                       "ratio_container_best")) +
                    f" {e['best_inkernel']}\n")
    plots = ["'results.dat' using 2:xtic(1) title 'ours (seed ABI)' "
             "lc rgb '#1f5fbf'"]
    if any(e["ratio_container_best"] is not None for e in es):
        plots.append("'' using 3 title 'container (ours, container ABI)' "
                     "lc rgb '#2f9f3f'")
    with open(os.path.join(outdir, "results.gp"), "w",
              encoding="utf-8") as f:
        f.write(f"""# Made by tests/bench/report.py; run in {outdir}.
set terminal {term} size 1200,700 font ',10'
set output 'results.png'
set title "Ours / best in-kernel VFIO (type1 or iommufd, whichever is better per row); medians, QEMU TCG, one boot"
set ylabel 'ratio to the best in-kernel path'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set datafile missing 'NaN'
set xtics rotate by -40 left scale 0 nomirror noenhanced
set rmargin 10
set yrange [0:*]
set grid ytics
set key tmargin center horizontal
set arrow from graph 0, first 1 to graph 1, first 1 nohead lw 2 dt 2 lc rgb '#000000' front
plot {", ".join(plots)}
""")


def plot_mapping_cost(outdir, entries, term):
    """Row 3: per-op cost against the number of mappings, every backend."""
    counts = sorted({int(e["row"][5:]) for e in entries
                     if e["row"].startswith("many-")})
    cols = [(b, op) for b in BACKENDS for op in ("map", "unmap")
            if any(med(find(entries, f"many-{n}", f"{op}_ns"), b)
                   for n in counts)]
    if not cols:
        return
    with open(os.path.join(outdir, "mapping-cost.dat"), "w",
              encoding="utf-8") as f:
        f.write("# count " + " ".join(f"{b}_{op}_ns" for b, op in cols) +
                "\n")
        for n in counts:
            vals = [med(find(entries, f"many-{n}", f"{op}_ns"), b)
                    for b, op in cols]
            f.write(f"{n} " + " ".join("NaN" if v is None else f"{v:.1f}"
                                       for v in vals) + "\n")
    titles = {"ours": "ours", "intree": "in-kernel type1",
              "iommufd": "in-kernel iommufd",
              "container": "ours, container ABI"}
    colors = {"ours": "#1f5fbf", "intree": "#d0501f", "iommufd": "#8f3fbf",
              "container": "#2f9f3f"}
    plots = ", \\\n     ".join(
        f"'mapping-cost.dat' using 1:{k + 2} with linespoints "
        f"lc rgb '{colors[b]}' lw 2 "
        f"{'pt 7 dt 1' if op == 'map' else 'pt 5 dt 2'} "
        f"title '{titles[b]} {op}'"
        for k, (b, op) in enumerate(cols))
    tics = ", ".join(f"'{n // 1000}k' {n}" if n >= 1000 else f"'{n}' {n}"
                     for n in counts)
    with open(os.path.join(outdir, "mapping-cost.gp"), "w",
              encoding="utf-8") as f:
        f.write(f"""# Made by tests/bench/report.py; run in {outdir}.
set terminal {term} size 900,650 font ',11'
set output 'mapping-cost.png'
set title "Per-op cost of separate 4 KiB DMA mappings (QEMU TCG, one boot)"
set xlabel 'mappings in the container / IOAS'
set ylabel 'mean ns per map / unmap'
set logscale x
set xrange [{counts[0] / 1.5:g}:{counts[-1] * 1.5:g}]
set xtics ({tics})
set datafile missing 'NaN'
set yrange [0:*]
set grid
set key below center horizontal
plot {plots}
""")


def print_table(entries, present, skips, tg):
    print()
    print("Medians of the repetitions; best = the better in-kernel path of "
          "the row; ratio = ours (or container) / best.")
    print("Rates (*_s, pps): higher is better, a ratio above 1 means ours "
          "is faster.  Times (ms, ns, us): a ratio below 1 does.")
    hdr = (f"{'row':31} {'metric':11} {'intree':>9} {'iommufd':>9} "
           f"{'best':>7} {'ours':>9} {'container':>9} {'ours/b':>7} "
           f"{'mod/b':>7}")
    print(hdr)
    print("-" * len(hdr))
    for e in entries:
        r = [e[k] for k in ("ratio_ours_best", "ratio_container_best")]
        print(f"{e['label']:31} {e['metric']:11} {cell(e, 'intree'):>9} "
              f"{cell(e, 'iommufd'):>9} {e['best_inkernel'] or '-':>7} "
              f"{cell(e, 'ours'):>9} {cell(e, 'container'):>9} " +
              " ".join(f"{'-' if x is None else f'{x:.2f}':>7}" for x in r))
    print()
    print("Spread: min..max of the repetitions (their number).")
    hdr = f"{'row':31} {'metric':11}" + "".join(f" {b:>17}"
                                                  for b in BACKENDS)
    print(hdr)
    print("-" * len(hdr))
    for e in entries:
        cells = []
        for b in BACKENDS:
            s = e["backends"][b]
            cells.append(f"{fmt(s['min'])}..{fmt(s['max'])} ({s['n']})"
                         if s else cell(e, b))
        print(f"{e['label']:31} {e['metric']:11}" +
              "".join(f" {c:>17}" for c in cells))
    e = find(entries, "bar0", "mmap_ops_s")
    p = find(entries, "bar0", "pread_ops_s")
    for b in BACKENDS:
        r = ratio(med(e, b), med(p, b))
        if r is not None:
            print(f"5 BAR0 mmap/pread ({b}): {r:.1f}x")
    print()
    for b in BACKENDS:
        if b not in present:
            print(f"{b}: no figures in this run (backend not run or not "
                  "available on this kernel)")
    for (b, row), why in sorted(skips.items()):
        print(f"{b} {row}: skipped: {why}")
    print()
    print("Targets (ours: seed ABI; container: container ABI):")
    for name, holds, detail in tg:
        word = {True: "HOLDS", False: "MISSED", None: "N/A"}[holds]
        print(f"  {word:6} {name}: {detail}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log", help="the VM run's output")
    ap.add_argument("outdir")
    ap.add_argument("--terminal", default="pngcairo")
    ap.add_argument("--meta", action="append", default=[],
                    help="key=value recorded in results.json")
    a = ap.parse_args()

    reps, skips, errors, problems, phases = parse(a.log)
    present = [b for b in BACKENDS
               if any(k[0] == b for k in reps) or b in phases]
    entries = summarize(reps, skips)
    tg = targets(entries)
    meta = dict(kv.split("=", 1) for kv in a.meta if "=" in kv)
    meta.update(terminal=a.terminal, errors=errors, vm_problems=problems,
                phases=phases)
    write_files(a.outdir, entries, tg, meta, present)
    print_table(entries, present, skips, tg)

    # Every backend that ran has every row that any backend measured,
    # unless it said why not; testpmd comes from another program.
    missing = []
    for b in present:
        m = [f"{e['row']} {e['metric']}" for e in entries
             if e["row"] != "testpmd" and not e["backends"][b] and
             b not in e["skipped"]]
        if m:
            missing.append(f"{b}: {len(m)} of {len(entries)} "
                           f"({', '.join(m[:4])}{', ...' if m[4:] else ''})")
    if "ours" not in present or not set(INKERNEL) & set(present):
        missing.append("no figures from ours or from any in-kernel backend")
    if errors or problems or missing:
        print()
        print("Problems:")
        for e in errors:
            print(f"  ERROR {e}")
        for p in problems:
            print(f"  vm: {p}")
        for b in BACKENDS:
            bad = [rc for rc in phases.get(b, []) if rc != "0"]
            if bad:
                print(f"  backend {b}: exit status {' '.join(bad)}")
        for m in missing:
            print(f"  missing: {m}")
    # The guest command's exit status repeats what the ERROR lines say;
    # anything else (a kernel WARNING, a harness failure) fails the run.
    fatal = [p for p in problems if not p.startswith("vm/guest command")]
    return 0 if not missing and not errors and not fatal else 1


if __name__ == "__main__":
    sys.exit(main())
