#!/usr/bin/env bash
# Checks the guest peer infrastructure: two siw guests joined by a QEMU socket link (one listens,
# the other connects), rping between them, both must print "SIW-PEER: PASS".
#   tools/siw-peer/selftest.sh [default|crc|rev1] [COUNT]
# Logs and the server side's pcap go to $SIW_PEER_DIR/selftest-<variant>/.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
VARIANT="${1:-default}"
COUNT="${2:-20}"
siw_check_variant "$VARIANT"
OUT="$SIW_PEER_DIR/selftest-$VARIANT"
mkdir -p "$OUT"
rm -f "$OUT"/*.log "$OUT"/*.pcap
# Build everything first so that the two boots start close together.
"$SIW_PEER_SRC/mkinitramfs.sh" "$VARIANT" > /dev/null

# A free loopback port (QEMU accepts exactly one connection on it, so never probe it by connecting).
PORT=""
for _ in $(seq 50); do
    p=$((20000 + RANDOM % 20000))
    if ! ss -Hltn "sport = :$p" | grep -q .; then PORT=$p; break; fi
done
[ -n "$PORT" ] || siw_die "no free port found"

"$SIW_PEER_SRC/run-guest.sh" --variant "$VARIANT" --quiet --listen "127.0.0.1:$PORT" --ip 10.0.0.2/24 \
    --mac 52:54:00:00:00:02 --rping "-s -a 0.0.0.0 -v -C $COUNT" --log "$OUT/server.log" \
    --pcap "$OUT/server.pcap" --timeout 180 &
server=$!
for _ in $(seq 100); do
    ss -Hltn "sport = :$PORT" | grep -q . && break
    sleep 0.1
done
ss -Hltn "sport = :$PORT" | grep -q . || { kill "$server"; siw_die "the server guest's QEMU does not listen on $PORT"; }
# Let the server guest reach its rping listener first (the client's rping does not retry).
for _ in $(seq 300); do grep -q 'SIW-PEER: ready after' "$OUT/server.log" 2>/dev/null && break; sleep 0.1; done
"$SIW_PEER_SRC/run-guest.sh" --variant "$VARIANT" --quiet --connect "127.0.0.1:$PORT" --ip 10.0.0.1/24 \
    --mac 52:54:00:00:00:01 --rping "-c -a 10.0.0.2 -v -C $COUNT" --log "$OUT/client.log" --timeout 180 &
client=$!
rc=0
wait "$client" || rc=1
wait "$server" || rc=1
for side in server client; do
    echo "== $side: $(grep -m1 '^SIW-PEER: \(PASS\|FAIL\)' "$OUT/$side.log" || echo 'no verdict')," \
         "$(grep -c 'ping data: rdma-ping-' "$OUT/$side.log") rping data lines"
done
if [ "$rc" = 0 ]; then echo "selftest $VARIANT: PASS"; else echo "selftest $VARIANT: FAIL (logs in $OUT)"; fi
exit $rc
