#!/usr/bin/env bash
# Runs the markers-versus-buffering study (docs/studies/markers-vs-buffering.md): every
# platform/sweeps/study-*.json through rnic-sweep, the buffer-size summary of study (b), and copies
# the figures (PNG, SVG) to docs/studies/figures/. The study (b) summary table is written to
# sweeps-out/study-buffer-size/buffer-needed.md and printed.
#
#   tools/run-study.sh            default study (5 seeds; each sweep's time is in the README)
#   tools/run-study.sh --large    5 seeds and 4x the RDMA Writes per run; outputs in
#                                 sweeps-out/<name>-large/, figures in docs/studies/figures/large/
#   tools/run-study.sh --current  the same sweeps on the current model: the transmitter and booking
#                                 keys each sweep pins (rnic.tcp.tx_order, link.order,
#                                 rnic.tcp.tx_interval_cycles, simulation.resource_order and a fixed
#                                 rnic.tcp.tx_ahead_frames) are left to their defaults; outputs in
#                                 sweeps-out/<name>-current/, figures in docs/studies/figures/current/
#                                 (with --large: <name>-current-large, figures/current-large/)
#   tools/run-study.sh --sim BIN  the rnic-sim binary the sweeps run (default build/bin/rnic-sim);
#                                 runs already done are kept whatever binary made them (rnic-sweep
#                                 compares the scenario arguments only): add --force after a change
#   tools/run-study.sh -j N       rnic-sweep parallelism (default 2)
#   tools/run-study.sh --force    run every point again (after rebuilding rnic-sim)
#
# Run from anywhere; it changes to the project root. Needs build/bin/rnic-sim and build/bin/rnic-sweep
# (cmake --build build -j2 --target rnic-sim rnic-sweep), gnuplot for the figures and python3.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

large=0
current=0
sim=build/bin/rnic-sim
jobs=2
force=()
while [ $# -gt 0 ]; do
  case "$1" in
    --large) large=1 ;;
    --current) current=1 ;;
    --sim) shift; sim="$1" ;;
    -j) shift; jobs="$1" ;;
    --force) force=(--force) ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "run-study.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done

sweep_bin=build/bin/rnic-sweep
for b in "$sim" "$sweep_bin"; do
  [ -x "$b" ] || { echo "run-study.sh: $b is missing; build it: cmake --build build -j2 --target rnic-sim rnic-sweep" >&2; exit 2; }
done

studies=(loss buffer-size buffer-size-sack hostbus bursts resegment loss-rates loss-bursty reorder framing-overhead transmit-model)
# (a5) compares the two transmitters itself: nothing to leave to the defaults.
[ "$current" = 1 ] && studies=("${studies[@]/transmit-model}")
suffix=""
derive_flags=()
[ "$current" = 1 ] && suffix="-current" && derive_flags+=(--current)
[ "$large" = 1 ] && suffix="$suffix-large" && derive_flags+=(--large)
figdir=docs/studies/figures${suffix:+/${suffix#-}}
mkdir -p "$figdir"
status=0
start=$(date +%s)

for s in "${studies[@]}"; do
  [ -n "$s" ] || continue
  file="platform/sweeps/study-$s.json"
  out="sweeps-out/study-$s$suffix"
  if [ -n "$suffix" ]; then
    # Derived sweep file (tools/derive-sweep.py): --large, --current; otherwise the same axes.
    mkdir -p "sweeps-out/study$suffix"
    gen="sweeps-out/study$suffix/study-$s.json"
    python3 tools/derive-sweep.py "$file" "$gen" "${derive_flags[@]}"
    file="$gen"
  fi
  echo "== study $s: $file -> $out"
  t0=$(date +%s)
  if ! "$sweep_bin" "$file" --out "$out" -j "$jobs" --sim "$sim" "${force[@]}"; then
    echo "run-study.sh: study $s: some runs failed (see $out/report.md)" >&2
    status=1
  fi
  echo "== study $s: $(( $(date +%s) - t0 )) s"
  for f in "$out"/plots/*.png "$out"/plots/*.svg; do
    [ -e "$f" ] && cp "$f" "$figdir/study-$s-$(basename "$f")"
  done
done

# Study (b): smallest reassembly budget reaching 95% of the loss-free goodput, and 95% of the goodput
# with the largest budget at the same loss, per (link rate, propagation).
bs_out="sweeps-out/study-buffer-size$suffix"
# The same for study-buffer-size-sack.json (the NIC-like sender and window, NewReno against SACK
# recovery), grouped by the recovery instead of the two model keys: buffer-needed.md beside it.
budget_table() {
python3 - "$1" "$2" "$3" "$4" <<'PY'
import csv, sys
from collections import defaultdict
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["status"] == "ok" and r["goodput_gbps"] != ""]
model_keys = sys.argv[3].split(",")
g = defaultdict(list)
for r in rows:
    g[("/".join(r.get(k, "") for k in model_keys), float(r["link.rate"]), float(r["link.propagation"]), r["budget"])].append(float(r["goodput_gbps"]))
mean = {k: sum(v) / len(v) for k, v in g.items()}
budgets = sorted({k[3] for k in mean if k[3] != "lossfree"}, key=int)
lines = ["| " + sys.argv[4] + " | link (Gb/s) | one-way propagation (us) | loss-free goodput | goodput at " + budgets[-1] +
         " KiB | smallest budget for 95% of loss-free (KiB) | smallest budget for 95% of the " + budgets[-1] + " KiB goodput (KiB) |",
         "|---|---:|---:|---:|---:|---:|---:|"]
for clamp, rate, prop in sorted({(k[0], k[1], k[2]) for k in mean}):
    ref = mean.get((clamp, rate, prop, "lossfree"))
    top = mean.get((clamp, rate, prop, budgets[-1]))
    def first(th):
        for b in budgets:
            v = mean.get((clamp, rate, prop, b))
            if v is not None and v >= th:
                return b
        return "not reached"
    lines.append("| %s | %g | %g | %.2f | %.2f | %s | %s |" % (clamp or "-", rate, prop, ref, top, first(0.95 * ref), first(0.95 * top)))
text = "\n".join(lines) + "\n"
open(sys.argv[2], "w").write(text)
print(text)
PY
}
budget_table "$bs_out/table.csv" "$bs_out/buffer-needed.md" rnic.tcp.window_clamp,rnic.tcp.tx_ahead_frames \
  "window clamp / frames ahead"
bss_out="sweeps-out/study-buffer-size-sack$suffix"
budget_table "$bss_out/table.csv" "$bss_out/buffer-needed.md" rnic.tcp.sack_recovery "SACK recovery"

# Study (b), the tables the text quotes (means over the seeds, 95% confidence intervals): the peak
# reassembly occupancy with ample memory per sender model, and goodput at the smallest budget per
# model. Appended to buffer-needed.md.
{
  for tx in 0 8; do
    echo
    echo "Peak reassembly occupancy (KiB), 2048 KiB budget, window unclamped, rnic.tcp.tx_ahead_frames=$tx:"
    echo
    python3 tools/study-table.py "$bs_out/table.csv" --rows link.rate --cols link.propagation \
      --metric b_reassembly_peak_bytes --where budget=2048 --where rnic.tcp.window_clamp=none \
      --where rnic.tcp.tx_ahead_frames=$tx --scale 0.0009765625 --digits 0
  done
  for clamp in none reassembly; do
    for tx in 0 8; do
      echo
      echo "Goodput (Gb/s), 64 KiB budget, rnic.tcp.window_clamp=$clamp, rnic.tcp.tx_ahead_frames=$tx:"
      echo
      python3 tools/study-table.py "$bs_out/table.csv" --rows link.rate --cols link.propagation \
        --metric goodput_gbps --where budget=64 --where rnic.tcp.window_clamp=$clamp \
        --where rnic.tcp.tx_ahead_frames=$tx --digits 2
    done
  done
  echo
  echo "Losses on the link per run, 64 KiB budget, window unclamped, whole window queued:"
  echo
  python3 tools/study-table.py "$bs_out/table.csv" --rows link.rate --cols link.propagation --metric link_losses \
    --where budget=64 --where rnic.tcp.window_clamp=none --where rnic.tcp.tx_ahead_frames=0 --digits 0
} | tee -a "$bs_out/buffer-needed.md"

# Studies (a), (a2)-(a4) and (a2) at 1e-6 (study-loss-rare.json, run on its own: it is 25 runs of
# 29 GB each), the tables the text quotes: per receive path and loss (or reordering), with NewReno
# and with SACK recovery. Written to sweeps-out/study-loss-rates/tables.md.
mkdir -p "sweeps-out/study-loss-rates$suffix"
{
  for s in loss loss-rates loss-bursty reorder loss-rare; do
    t="sweeps-out/study-$s$suffix/table.csv"
    [ -f "$t" ] || continue
    cols=loss; [ "$s" = reorder ] && cols=link.a_to_b.reorder; [ "$s" = loss-rare ] && cols=status  # one loss rate: a column of "ok" runs
    for m in "goodput_gbps:Goodput (Gb/s):1:1" "p99_ns:p99 Write completion time (us):0.001:1" \
             "b_reassembly_peak_bytes:Peak reassembly occupancy (KiB):0.0009765625:1" \
             "b_moved_bytes/delivered_bytes:NIC-memory bytes moved per delivered byte:1:3"; do
      IFS=: read -r metric title scale digits <<< "$m"
      for sack in false true; do
        [ "$s" = loss-rare ] && [ "$sack" = false ] && continue  # SACK recovery only (see the sweep file)
        where=(--where rnic.tcp.sack_recovery=$sack); [ "$s" = loss-rare ] && where=()  # not an axis there
        echo
        echo "study-$s, $title, rnic.tcp.sack_recovery=$sack:"
        echo
        python3 tools/study-table.py "$t" --rows rx_path --cols "$cols" --metric "$metric" \
          "${where[@]}" --scale "$scale" --digits "$digits"
      done
    done
  done
} > "sweeps-out/study-loss-rates$suffix/tables.md" 2>&1 || true

echo "run-study.sh: all studies in $(( $(date +%s) - start )) s; figures in $figdir/"
exit $status
