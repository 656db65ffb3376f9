#!/usr/bin/env bash
# Runs every scenario of platform/scenarios/ (and the variants below) with two rnic-sim binaries and
# compares the results JSON outside `wallclock` and the pcap byte for byte. For changes that must
# not move the model (refactoring, speed): prints SAME or DIFFERS per run and ALL SAME at the end.
#   tools/compare-scenarios.sh OLD_RNIC_SIM NEW_RNIC_SIM [--set KEY=VALUE ...]
# Extra --set arguments apply to every run (only keys both binaries know). A key that only NEW
# reports (a new statistic, or a new scenario key echoed) is a note, not a difference; with
# STRICT=1 a new statistic counts as a difference (for speed work, where nothing may move).
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1 new=$2
shift 2
extra=("$@")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Variants that reach the out-of-order, fault and fabric paths the plain scenarios do not.
variants=(
  "rx-markers.json|link.a_to_b.loss=0.01"
  "rx-markers.json|link.a_to_b.loss=0.01 link.a_to_b.resegment=1"
  "rx-buffering.json|link.a_to_b.loss=0.01"
  "rx-aligned.json|link.a_to_b.loss=0.01"
  "default.json|rnic.framing=ift link.a_to_b.loss=0.01"
  "default.json|topology.kind=star topology.hosts=8 workload.type=incast"
  "default.json|topology.kind=star topology.hosts=17 workload.type=incast rnic.buffer.capacity=16MiB switch.buffer=1MiB workload.incast.rounds=3 pcie.generation=4 pcie.lanes=16 rnic.tcp.send_buffer=64KiB switch.pfc.enabled=true"
  "default.json|topology.kind=star topology.hosts=17 workload.type=incast rnic.buffer.capacity=16MiB switch.buffer=1MiB workload.incast.rounds=3 pcie.generation=4 pcie.lanes=16 rnic.tcp.send_buffer=64KiB rnic.tcp.ecn=true switch.ecn.enabled=true"
  "default.json|topology.kind=star topology.hosts=4 workload.type=all_to_all workload.matrix.messages=8 workload.matrix.size=16KiB workload.queue_depth=4"
  "default.json|topology.kind=leaf_spine topology.hosts=8 topology.leaves=2 topology.spines=2 workload.type=permutation workload.matrix.messages=8"
  "default.json|link.rate=10Gbps workload.sizes=[65536] workload.iterations=300"
  "default.json|workload.sizes=[64] workload.iterations=20000"
  "default.json|workload.type=send_bw workload.sizes=[64,4096] workload.iterations=500 link.a_to_b.loss=0.001"
  "default.json|workload.type=read_bw workload.sizes=[256,65536] workload.iterations=300 workload.poll_interval=7ns"
  "default.json|workload.type=atomic_bw workload.iterations=2000"
  "default.json|workload.completion=event workload.sizes=[4096] workload.iterations=500"
  "default.json|workload.type=write_lat workload.sizes=[64,8192] workload.iterations=200"
  "default.json|workload.type=read_lat workload.sizes=[64] workload.iterations=200"
  "default.json|workload.type=trace workload.trace=traces/ops-storage.csv"
  "mixed.json|link.a_to_b.loss=0.01 simulation.seed=3"
  "default.json|workload.qps=64 workload.sizes=[4096] workload.iterations=100 rnic.buffer.send_regions=shared link.a_to_b.loss=0.01"
  "default.json|workload.qps=1024 rnic.rdma.max_qp=1024 rnic.tcp.max_connections=1024 workload.sizes=[4096] workload.iterations=20 workload.buffer=64MiB host_memory.size=256MiB rnic.buffer.send_regions=shared rnic.context_cache.enabled=true"
)

run_pair() {  # name scenario sets...
  local name=$1 scen=$2
  shift 2
  local sets=()
  for kv in "$@" "${extra[@]}"; do sets+=(--set "$kv"); done
  local rc_old=0 rc_new=0
  "$old" --scenario "platform/scenarios/$scen" "${sets[@]}" --results "$work/old.json" \
    --pcap "$work/old.pcap" --log error >"$work/old.out" 2>&1 || rc_old=$?
  "$new" --scenario "platform/scenarios/$scen" "${sets[@]}" --results "$work/new.json" \
    --pcap "$work/new.pcap" --log error >"$work/new.out" 2>&1 || rc_new=$?
  if [[ $rc_old != "$rc_new" ]]; then echo "DIFFERS $name: exit $rc_old vs $rc_new"; return 1; fi
  if [[ $rc_old == 2 ]]; then echo "REFUSED $name (both): $(head -1 "$work/old.out")"; return 1; fi
  local verdict=0
  python3 - "$work/old.json" "$work/new.json" >"$work/diff.txt" <<'PY' || verdict=1
import json, os, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
strict = os.environ.get("STRICT") == "1"
for d in (a, b):
    d.pop("wallclock", None)
def diff(x, y, path=""):
    if type(x) != type(y):
        print(f"  {path}: {x!r} vs {y!r}"); return 1
    if isinstance(x, dict):
        n = 0
        for k in sorted(set(x) | set(y)):
            if k not in x and (path.startswith(".scenario") or not strict):
                print(f"  note: {path}.{k} is a new key")
            elif k not in x or k not in y:
                print(f"  {path}.{k}: only in {'new' if k not in x else 'old'}"); n += 1
            else:
                n += diff(x[k], y[k], f"{path}.{k}")
        return n
    if isinstance(x, list):
        if len(x) != len(y):
            print(f"  {path}: length {len(x)} vs {len(y)}"); return 1
        return sum(diff(p, q, f"{path}[{i}]") for i, (p, q) in enumerate(zip(x, y)))
    if x != y:
        print(f"  {path}: {x!r} vs {y!r}"); return 1
    return 0
sys.exit(1 if diff(a, b) else 0)
PY
  if [[ $verdict != 0 ]]; then echo "DIFFERS $name: results"; cat "$work/diff.txt"; return 1; fi
  cmp -s "$work/old.pcap" "$work/new.pcap" || { echo "DIFFERS $name: pcap"; return 1; }
  echo "SAME $name"
  cat "$work/diff.txt"
}

fail=0
for f in platform/scenarios/*.json; do
  run_pair "$(basename "$f")" "$(basename "$f")" || fail=1
done
for v in "${variants[@]}"; do
  scen=${v%%|*}
  read -r -a sets <<<"${v#*|}"
  run_pair "$scen ${sets[*]}" "$scen" "${sets[@]}" || fail=1
done
if [[ $fail == 0 ]]; then echo "ALL SAME"; else echo "SOME DIFFER"; exit 1; fi
