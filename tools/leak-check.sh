#!/usr/bin/env bash
# Connect/disconnect cycles leave nothing behind (issue 19 point 3, docs/reliability.md "Resource
# exhaustion"): runs the hostile workload, whose every episode is a QP created, connected, failed or
# closed and destroyed, once for one episode and once for many, with simulation.live_objects=true,
# and checks that each RNIC ends the long run holding what it held after one cycle: the same QPs,
# CQs and valid STags, one live TCP connection (the well-behaved QP's) beyond those still in
# TIME-WAIT, and one send region per TCP connection. Run on the sanitizer build (SanitizerSoak.Run)
# LeakSanitizer also checks that the process frees every heap block it allocated.
#   tools/leak-check.sh [-b RNIC_SIM] [-e EPISODES]
# Exit status 1 on any object left behind (or a failed run), 2 on a bad command line.
set -euo pipefail
sim= episodes=300
while [ $# -gt 0 ]; do
  case "$1" in
    -b) sim=$(realpath "$2"); shift 2 ;;
    -e) episodes=$2; shift 2 ;;
    *) echo "usage: $0 [-b RNIC_SIM] [-e EPISODES]" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
sim=${sim:-build/bin/rnic-sim}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for n in 1 "$episodes"; do
  if ! "$sim" --set workload.type=hostile --set "workload.hostile.episodes=$n" --set simulation.live_objects=true \
      --seed 5 --results "$dir/live-$n.json" --log error > "$dir/live-$n.log" 2>&1; then
    echo "leak-check: the run of $n episodes failed:"; tail -20 "$dir/live-$n.log"; exit 1
  fi
done
python3 - "$dir/live-1.json" "$dir/live-$episodes.json" "$episodes" <<'EOF'
import json, sys
one, many, episodes = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
problems = []
opened = many["modules"]["a.rnic"]["toe"].get("connections_opened", 0)
if opened != episodes + 1:
    problems.append(f"a.rnic opened {opened} connections, expected {episodes + 1} (one per episode and the good QP)")
for nic in ("a.rnic", "b.rnic"):
    base, end = one["live_objects"][nic], many["live_objects"][nic]
    for k in ("qps", "cqs", "stags"):
        if end[k] != base[k]:
            problems.append(f"{nic}: {k} {end[k]} after {episodes} cycles, {base[k]} after one")
    live = end["tcp_connections"] - end["tcp_connections_time_wait"]
    if live != 1:
        problems.append(f"{nic}: {live} TCP connections live beyond TIME-WAIT, expected 1 (the good QP)")
    if end["buffer_regions"] != end["tcp_connections"]:
        problems.append(f"{nic}: {end['buffer_regions']} send regions for {end['tcp_connections']} TCP connections")
    print(f"leak-check: {nic} after {episodes} cycles: qps {end['qps']}, cqs {end['cqs']}, stags {end['stags']}, "
          f"tcp {end['tcp_connections']} ({end['tcp_connections_time_wait']} in TIME-WAIT), "
          f"buffer regions {end['buffer_regions']}")
for p in problems:
    print("leak-check: LEFT BEHIND: " + p)
sys.exit(1 if problems else 0)
EOF
echo "leak-check: OK ($episodes connect/disconnect cycles)"
