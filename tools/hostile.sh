#!/usr/bin/env bash
# Runs the hostile peer (workload.type = hostile, docs/reliability.md) for N seeds and prints the
# totals: FPDUs sent, violations answered as required, wrong or missing answers, bytes written
# outside the grants, the well-behaved QP's operations and errors.
#   tools/hostile.sh [-n SEEDS] [-e EPISODES] [-m grammar|mutate] [-b RNIC_SIM] [--set KEY=VALUE ...]
# Exit status 1 when any run fails or any invariant is broken.
set -euo pipefail
seeds=20 episodes=12 mode=grammar sim=build/bin/rnic-sim extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    -n) seeds=$2; shift 2 ;;
    -e) episodes=$2; shift 2 ;;
    -m) mode=$2; shift 2 ;;
    -b) sim=$2; shift 2 ;;
    --set) extra+=(--set "$2"); shift 2 ;;
    *) echo "usage: $0 [-n SEEDS] [-e EPISODES] [-m grammar|mutate] [-b RNIC_SIM] [--set KEY=VALUE ...]" >&2; exit 2 ;;
  esac
done
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
for seed in $(seq 1 "$seeds"); do
  if ! "$sim" --set workload.type=hostile --set workload.hostile.mode="$mode" \
       --set workload.hostile.episodes="$episodes" --seed "$seed" "${extra[@]}" \
       --results "$dir/$seed.json" --log off > "$dir/$seed.out" 2>&1; then
    echo "seed $seed: FAILED ($(grep -m1 -E 'workload error|status' "$dir/$seed.out" || true))"
    fail=1
  fi
done
python3 - "$dir" "$seeds" <<'PY'
import json, os, sys
d, n = sys.argv[1], int(sys.argv[2])
keys = ["episodes", "fpdus_sent", "violations_sent", "answered_as_required", "answered_wrongly", "unanswered",
        "bytes_outside_grants"]
tot = dict.fromkeys(keys, 0); good_ops = good_err = 0; runs = 0
for s in range(1, n + 1):
    p = os.path.join(d, f"{s}.json")
    if not os.path.exists(p): continue
    h = json.load(open(p)).get("hostile")
    if h is None: continue
    runs += 1
    for k in keys: tot[k] += h[k]
    good_ops += h["good_qp"]["operations"]; good_err += h["good_qp"]["errors"]
print(f"runs {runs}/{n}: " + ", ".join(f"{k} {v}" for k, v in tot.items()) +
      f", good_qp operations {good_ops}, good_qp errors {good_err}")
PY
exit $fail
