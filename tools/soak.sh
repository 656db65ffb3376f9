#!/usr/bin/env bash
# Soak (issue 19 item 5, docs/reliability.md "Soak"): seed after seed until a wall-clock budget is
# spent, three runs per seed:
#   1. the mixed workload (every operation, data checked byte for byte) on 4..64 QPs (drawn from the
#      seed) under every link fault at once, both directions: random loss, Gilbert-Elliott bursts,
#      reordering, duplication, bit flips caught by the TCP/IP checksums, and middlebox
#      re-segmentation. It must complete with no byte lost or wrong;
#   2. the same with the bit flips past the checksums (corrupt_fixes_checksum), left to the MPA CRC.
#      A CRC error is fatal to its stream (RFC 5044 §8: the connection is closed, with a Terminate
#      of layer LLP), so this run ends with the flushed work requests reported as failed; it must
#      place no wrong byte, answer every CRC error with a Terminate, and end (not hang);
#   3. the hostile peer (grammar and mutate modes by turn) with its well-behaved QP beside it.
# The hostile peer cannot share a run with the mixed workload: a scenario has one workload
# (workload.type), and the hostile peer owns host b. Prints the totals: operations, bytes checked,
# bytes lost or wrong, faults injected, CRC errors and their Terminates, hostile FPDUs and answers,
# bytes outside the grants. Exit status 1 on any broken invariant.
#   tools/soak.sh [-t SECONDS] [-s FIRST_SEED] [-b RNIC_SIM] [-i MIXED_ITERATIONS] [-e HOSTILE_EPISODES]
set -euo pipefail
budget=60 seed=1 sim= iterations=400 episodes=40
while [ $# -gt 0 ]; do
  case "$1" in
    -t) budget=$2; shift 2 ;;
    -s) seed=$2; shift 2 ;;
    -b) sim=$(realpath "$2"); shift 2 ;;
    -i) iterations=$2; shift 2 ;;
    -e) episodes=$2; shift 2 ;;
    *) echo "usage: $0 [-t SECONDS] [-s FIRST_SEED] [-b RNIC_SIM] [-i MIXED_ITERATIONS] [-e HOSTILE_EPISODES]" >&2
       exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
sim=${sim:-build/bin/rnic-sim}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
faults=()
for d in a_to_b b_to_a; do
  faults+=(--set link.$d.loss=0.005
           --set link.$d.burst.good_to_bad=0.0005 --set link.$d.burst.bad_to_good=0.5
           --set link.$d.reorder=0.02 --set link.$d.reorder_delay=4us
           --set link.$d.duplicate=0.01
           --set link.$d.corrupt=0.005
           --set link.$d.resegment=0.05)
done
# The MPA negotiation may wait out TCP's backed-off retransmissions of a lost Request (1 + 2 + 4 +
# ... ms): the 10 ms default would end the connect on the third loss in a row.
faults+=(--set rnic.mpa.timeout=90ms)
start=$(date +%s) fail=0 n=0
while [ $(( $(date +%s) - start )) -lt "$budget" ]; do
  qps=$(( 4 << (seed % 5) ))  # 4, 8, 16, 32, 64
  # 40 KiB messages at most need 332 KiB of workload buffer per QP (32 MiB for 64), and shared send
  # regions let 64 connections share the 4 MiB of NIC buffer memory.
  if "$sim" --scenario platform/scenarios/mixed.json --seed "$seed" "${faults[@]}" \
       --set workload.qps=$qps --set workload.iterations="$iterations" --set workload.buffer=32MiB \
       --set host_memory.size=128MiB --set rnic.buffer.send_regions=shared \
       --results "$dir/m$seed.json" --log off > "$dir/m$seed.out" 2>&1; then :
  elif grep -q "client connect failed" "$dir/m$seed.out"; then
    # A burst that swallows the MPA Request and each retransmission until the driver's command
    # timeout (100 ms) fails the connect with its status; counted (the summary), not a lost byte.
    echo "seed $seed mixed ($qps QPs): connect timed out under loss (counted)"
    touch "$dir/m$seed.connect_timeout"
  else
    echo "seed $seed mixed ($qps QPs): FAILED: $(grep -m1 -E 'error|status' "$dir/m$seed.out" || true)"
    fail=1
  fi
  # Past the checksums: failing is expected (stream torn down), hanging or a wrong byte is not.
  "$sim" --scenario platform/scenarios/mixed.json --seed "$seed" "${faults[@]}" \
       --set link.a_to_b.corrupt_fixes_checksum=true --set link.b_to_a.corrupt_fixes_checksum=true \
       --set workload.qps=$qps --set workload.iterations="$iterations" --set workload.buffer=32MiB \
       --set host_memory.size=128MiB --set rnic.buffer.send_regions=shared \
       --results "$dir/c$seed.json" --log off > "$dir/c$seed.out" 2>&1 || true
  mode=grammar; [ $((seed % 2)) -eq 0 ] && mode=mutate
  if "$sim" --set workload.type=hostile --set workload.hostile.mode=$mode --seed "$seed" \
       --set workload.hostile.episodes="$episodes" \
       --results "$dir/h$seed.json" --log off > "$dir/h$seed.out" 2>&1; then :; else
    echo "seed $seed hostile ($mode): FAILED: $(grep -m1 -E 'error|status' "$dir/h$seed.out" || true)"
    fail=1
  fi
  n=$((n + 1)) seed=$((seed + 1))
done
python3 - "$dir" "$(( $(date +%s) - start ))" <<'PY' || fail=1
import glob, json, os, sys
d, wall = sys.argv[1], int(sys.argv[2])
tot = dict(mixed_runs=0, mixed_ok=0, operations=0, bytes_checked=0, bytes_mismatched=0, faults=0,
           hostile_runs=0, hostile_ok=0, fpdus=0, answered=0, wrong=0, unanswered=0, outside=0, good_errors=0)
kinds = {}
connect_timeouts = len(glob.glob(os.path.join(d, "m*.connect_timeout")))
for p in sorted(glob.glob(os.path.join(d, "m*.json"))):
    v = json.load(open(p)); tot["mixed_runs"] += 1
    tot["mixed_ok"] += v["status"] == "ok" or os.path.exists(p[:-5] + ".connect_timeout")
    tot["operations"] += sum(o["count"] for o in v.get("operations", {}).values())
    tot["bytes_checked"] += v["integrity"]["bytes_checked"]; tot["bytes_mismatched"] += v["integrity"]["bytes_mismatched"]
    for direction in v["modules"]["link"].values():
        if not isinstance(direction, dict): continue
        for k, x in direction.get("faults", {}).items():
            kinds[k] = kinds.get(k, 0) + x; tot["faults"] += x
crc = dict(runs=0, ended=0, checked=0, wrong=0, crc_errors=0, terminates=0, completed=0)
for p in sorted(glob.glob(os.path.join(d, "c*.json"))):
    v = json.load(open(p)); crc["runs"] += 1
    crc["ended"] += not v["status"].startswith("stuck"); crc["completed"] += v["status"] == "ok"
    crc["checked"] += v["integrity"]["bytes_checked"]; crc["wrong"] += v["integrity"]["bytes_mismatched"]
    for h in ("a.rnic", "b.rnic"):
        crc["crc_errors"] += v["modules"][h]["framer"].get("crc_errors", 0)
        crc["terminates"] += v["modules"][h]["rdma"]["terminates_sent"]
for p in sorted(glob.glob(os.path.join(d, "h*.json"))):
    v = json.load(open(p)); h = v.get("hostile"); tot["hostile_runs"] += 1; tot["hostile_ok"] += v["status"] == "ok"
    if h is None: continue
    tot["fpdus"] += h["fpdus_sent"]; tot["answered"] += h["answered_as_required"]; tot["wrong"] += h["answered_wrongly"]
    tot["unanswered"] += h["unanswered"]; tot["outside"] += h["bytes_outside_grants"]; tot["good_errors"] += h["good_qp"]["errors"]
print(f"soak: {wall} s wall; mixed runs {tot['mixed_ok']}/{tot['mixed_runs']} ok ({connect_timeouts} of them a connect "
      f"timed out under loss): operations {tot['operations']}, "
      f"bytes checked {tot['bytes_checked']}, bytes lost or wrong {tot['bytes_mismatched']}, faults injected {tot['faults']} "
      f"({', '.join(f'{k} {x}' for k, x in sorted(kinds.items()))}); hostile runs {tot['hostile_ok']}/{tot['hostile_runs']} ok: "
      f"FPDUs {tot['fpdus']}, answered as required {tot['answered']}, wrongly {tot['wrong']}, unanswered {tot['unanswered']}, "
      f"bytes outside grants {tot['outside']}, good QP errors {tot['good_errors']}")
print(f"past the checksums: runs {crc['runs']} ({crc['ended']} ended, {crc['completed']} met no CRC error), "
      f"bytes checked {crc['checked']}, wrong {crc['wrong']}, CRC errors {crc['crc_errors']}, Terminates sent {crc['terminates']}")
bad = (tot["bytes_mismatched"] or tot["outside"] or tot["wrong"] or tot["unanswered"] or tot["good_errors"]
       or tot["mixed_ok"] != tot["mixed_runs"] or tot["hostile_ok"] != tot["hostile_runs"] or tot["mixed_runs"] == 0
       or crc["wrong"] or crc["ended"] != crc["runs"] or crc["terminates"] < crc["crc_errors"])
sys.exit(1 if bad else 0)
PY
exit $fail
