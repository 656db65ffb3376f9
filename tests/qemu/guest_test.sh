#!/usr/bin/env bash
# CTest: the Linux driver in a QEMU guest against rnic-sim (driver/linux/guest/run-guest.py). Builds
# the guest from Debian packages (the siw guest's kernel and headers, rnic.ko, busybox), boots it
# with the RNIC on x-pci-proxy-dev, loads the module (its self-test runs rping's client against host
# b's simulated rping server), unloads it, and checks both sides: the guest's verdict and the
# results of rnic-sim (host b's byte checks, the transport's counters, no refused DMA).
# Exit 77 (reported as skipped by CTest) when QEMU or the guest's packages cannot be installed.
# With MODE "misuse" the driver misuses the device on purpose (module parameter inject: a command
# ring outside guest RAM, doorbells of a QP that does not exist, an unknown command, a CQ destroyed
# under its QP, and after the pings a work request with an unknown opcode) and the test also checks
# that each drew the device's error status and (but for the destroy) the model's log line, that
# exactly the one DMA was refused, and that the self-test still passes.
# Every mode loads, unloads and loads the module again; the device is reset at each remove and both
# probes must start from command 0 (CTRL.RESET resets the firmware's command index).
# With MODE "tool" the pings run from user space instead (driver/linux/tools/rnic_rping over
# /dev/rnic0: WQEs, doorbells and CQ polling through mmap, no system call on the data path).
# With MODE "perf", rnic_perf runs RDMA Writes, Reads, Sends and FetchAdds (PINGS iterations of SIZE
# bytes each) from user space against host b's perf_server, which checks every byte it can see; the
# tool checks its Reads and the FetchAdds' originals. Its buffer is an anonymous mmap registered by
# pinning (RNIC_IOC_REG_USER_MR: 1 MiB + 4 KiB in four regions, 259 pages pinned, page lists).
# With MODE "kping", the pings run from the kernel through the RDMA core: rnic.ko's iWARP ib_device,
# rdma_cm and iw_cm, and the kernel consumer rnic_kping.ko (driver/linux/tools/rnic_kping_main.c); the
# test also checks the device as the RDMA core shows it (node type RNIC, port active, GID = MAC),
# the firmware's connect and the graceful close as the driver logged them, and a second load of the
# consumer against a port where nothing listens, whose connect must fail and be torn down.
# With MODE "kperf", rnic_kping.ko runs perf_server's client through the RDMA core instead: PINGS RDMA
# Writes, RDMA Reads and Sends of SIZE bytes posted through ib_post_send (8 in flight); host b checks
# the Writes and Sends, the module its Reads.
# With MODE "kserve" the guest is the passive side: rnic_kping.ko mode=server listens through rdma_cm
# (iw_cm's create_listen, the driver polling the firmware's next_peer), rejects host b's first
# connect with MPA private data (host b's connect fails with connection refused and the private data
# arrives at its firmware), accepts the next with private data, and serves rping's server protocol
# to host b's rping client (PINGS pings of SIZE bytes), checking each start buffer it reads; host b
# checks each echo. Host b's connects carry MPA Request private data ("rping-client-request",
# workload.rping.private_data), which the guest's consumer checks byte for byte in each request. rnic.ko is then removed with the consumer's listener still open.
# With MODE "rdmacore", Debian's own rping (rdmacm-utils), unmodified, runs in the guest through
# librdmacm, libibverbs and rnic.ko's provider librnic-rdmav34.so (driver/linux/provider) against host
# b's rping server: rping -c -a 10.0.0.2 -C PINGS -S SIZE -v -V must exit 0 after printing PINGS
# echoes it compared with what it sent (-V), host b must have checked PINGS * SIZE bytes with none
# wrong, and a second rping against port 7175, where nothing listens, must fail (RDMA_CM_EVENT_
# UNREACHABLE) without a hang. Skipped (77) where rdma-core 44's source cannot be had for the
# provider's build (driver/linux/provider/build.sh exit 3).
#   tests/qemu/guest_test.sh RNIC_SIM PINGS SIZE [plain|misuse|tool|perf|kping|kperf|kserve|rdmacore]
set -uo pipefail
SIM=$1 PINGS=${2:-20} SIZE=${3:-3000} MODE=${4:-plain}
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
if ! "$REPO/tools/siw-peer/install-deps.sh" > /dev/null 2>&1 || ! command -v qemu-system-x86_64 > /dev/null ||
   ! qemu-system-x86_64 -device help 2>/dev/null | grep x-pci-proxy-dev > /dev/null; then
    echo "SKIPPED: QEMU with x-pci-proxy-dev or the guest's Debian packages cannot be installed here"
    exit 77
fi
LOG="${RNIC_GUEST_DIR:-$REPO/build/rnic-guest}/ctest-$$"
if [ "$MODE" = rdmacore ]; then
    "$REPO/driver/linux/provider/build.sh" "${RNIC_GUEST_DIR:-$REPO/build/rnic-guest}/provider" > /tmp/rnic-provider-$$.log 2>&1
    st=$?
    if [ $st -eq 3 ]; then
        echo "SKIPPED: the libibverbs provider cannot be built here: $(tail -n1 /tmp/rnic-provider-$$.log)"
        rm -f /tmp/rnic-provider-$$.log
        exit 77
    fi
    [ $st -eq 0 ] || { cat /tmp/rnic-provider-$$.log; rm -f /tmp/rnic-provider-$$.log; echo "FAIL: the provider's build"; exit 1; }
    rm -f /tmp/rnic-provider-$$.log
fi
EXTRA=(--param bar_bench=200)
[ "$MODE" = misuse ] && EXTRA+=(--param inject=bad_dma+bad_doorbell+bad_command+bad_order+bad_wqe)
[ "$MODE" = tool ] && EXTRA+=(--tool rping)
[ "$MODE" = kping ] && EXTRA+=(--tool kping)
[ "$MODE" = kperf ] && EXTRA+=(--tool kperf)
[ "$MODE" = kserve ] && EXTRA+=(--tool kserve)
[ "$MODE" = rdmacore ] && EXTRA+=(--tool rdmacore)
[ "$MODE" = perf ] && EXTRA+=(--tool perf "--perf-args=-t,all,-s,$SIZE,-n,$PINGS,-q,16")
"$REPO/driver/linux/guest/run-guest.py" --sim "$SIM" --pings "$PINGS" --size "$SIZE" --timeout 180 --log-dir "$LOG" \
    "${EXTRA[@]}"
status=$?
[ $status -eq 0 ] || { echo "FAIL: run-guest.py status $status (logs in $LOG)"; exit 1; }
python3 - "$LOG/results.json" "$LOG/guest.log" "$PINGS" "$SIZE" "$MODE" "$LOG/sim.log" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
guest = open(sys.argv[2]).read()
pings, size, mode = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
sim = open(sys.argv[6]).read()
bad = []
def want(cond, what):
    if not cond: bad.append(what)
want(r["status"] == "ok", f"status {r['status']!r}")
rows = r["workload"]["rows"]
if mode == "perf":
    ops = {row["op"]: row for row in rows}
    want(sorted(ops) == ["client fetch_add", "client rdma_read", "client rdma_write", "client send"], f"rows {sorted(ops)}")
    want(all(row["integrity_ok"] and row["iterations"] == pings for row in rows), f"host b's rows: {rows}")
    span = (1048576 - 64) // size * size
    want(r["integrity"]["ok"] and r["integrity"]["bytes_checked"] == min(pings * size, span) + pings * size + 8 and
         r["integrity"]["bytes_mismatched"] == 0, f"host b's checks: {r['integrity']}")
elif mode == "kperf":
    ops = {row["op"]: row for row in rows}
    want(sorted(ops) == ["client rdma_read", "client rdma_write", "client send"], f"rows {sorted(ops)}")
    want(all(row["integrity_ok"] and row["iterations"] == pings for row in rows), f"host b's rows: {rows}")
    want(r["integrity"]["ok"] and r["integrity"]["bytes_checked"] == 2 * pings * size and
         r["integrity"]["bytes_mismatched"] == 0, f"host b's checks: {r['integrity']}")
else:
    want(r["integrity"]["ok"] and r["integrity"]["bytes_checked"] == pings * size and r["integrity"]["bytes_mismatched"] == 0,
         f"host b's checks: {r['integrity']}")
    want(len(rows) == 1 and rows[0]["iterations"] == pings, f"host b served {rows[0]['iterations'] if rows else 0} pings")
q = r["modules"]["a.qemu"]
want(q["bar_writes"] > 0 and q["bar_reads"] > 0 and q["ram_syncs"] > 0 and q["error"] == "", f"transport: {q}")
want(q["bad_messages"] == 0 and q["unknown_messages"] == 0 and q["refused_accesses"] == 0, f"transport errors: {q}")
m = r["modules"]["a.mem"]
want(m["dma_refused"] == (1 if mode == "misuse" else 0) and m["dma_reads"] > 0 and m["dma_writes"] > 0,
     f"guest RAM DMA: {m}")
want("BAR cost: 200 reads" in guest, "the driver's BAR cost line")
# CTRL.RESET at each remove: the firmware starts the ring at slot 0 again, so both probes (load,
# unload, load again) begin with command 0 on a device with no object of the earlier load.
want(guest.count("first command 0;") == 2, f"{guest.count('first command 0;')} of 2 probes started at command 0")
want(sim.count("device reset: command ring index 0") == 2, "the model's reset line at each of the 2 removes")
if mode == "misuse":
    # Command 0 is the driver's nop at bring-up; the misplaced ring's fetch is command 1 (slot 1).
    for line in ["DMA read refused: [0x1000000040, 0x1000000080) is not inside one of the guest's RAM regions",
                 "cannot read command 1 at 0x1000000040", "SQ doorbell for QP 63 which does not exist: ignored",
                 "RQ doorbell for QP 63 which does not exist: ignored", "unknown opcode 85",
                 "(opcode 85): not a work-request opcode of this device"]:
        want(line in sim, f"the model's log line {line!r}")
    want("firmware command 85 failed: bad opcode (status 1)" in guest, "the driver saw the device's bad_opcode status")
    want("inject bad_order: destroy_cq 0 under QP 0 -> -5, bad state" in guest, "destroy_cq under a QP: bad_state")
    want("inject bad_wqe: opcode 0x55 -> a completion status 8 (bad opcode)" in guest, "the malformed WQE's completion")
    want(r["log"]["errors"] >= 2, "errors counted in the results")
elif mode == "kserve":
    # Host b's connect attempts before the guest listens time out, and the rejected one is refused:
    # its driver logs each as an error; nothing else may be one.
    tries = sum(1 for l in sim.splitlines() if " error " in l and "b.verbs: connect: connection " in l)
    want(r["log"]["errors"] == tries and tries >= 1, f"{r['log']['errors']} error lines in rnic-sim's log, "
                                                     f"{tries} of them host b's failed connect attempts")
else:
    want(r["log"]["errors"] == 0, f"{r['log']['errors']} error lines in rnic-sim's log")
if mode not in ("perf", "kping", "kperf", "kserve", "rdmacore"):
    want(f"{pings} pings of {size} bytes, {pings * size} bytes checked, 0 bad" in guest, "the guest's own check line")
if mode == "perf":
    for op, check in [("write", "server: "), ("read", "client: "), ("send", "server: "), ("fetchadd", "client: originals")]:
        want(any(l.startswith(f" {op} ") and check in l and ("0 differ" in l or op == "fetchadd") for l in guest.splitlines()),
             f"rnic_perf's {op} row")
    want(f"server: counter {pings}" in guest, "the FetchAdd counter")
    want("in user memory at" in guest and "259 pages pinned" in guest, "the buffer registered from user memory")
    want("deregistered, its pages unpinned" in guest, "RNIC_IOC_DEREG_MR of the data region")
    want("rnic_perf: PASS" in guest and "RNIC-GUEST: PASS (rnic_perf)" in guest, "the tool's verdict")
    want(": removed" in guest and "released QP" in guest, "teardown lines (QP released, driver removed)")
elif mode == "kperf":
    for op, who in [("write", "server"), ("read ", "client"), ("send ", "server")]:
        want(f"rnic_kping: {op} {pings} x {size} bytes, depth 8:" in guest and
             any(l.endswith(f"{who}: {pings * size} bytes checked, 0 differ") for l in guest.splitlines()
                 if f"rnic_kping: {op} " in l), f"rnic_kping's {op.strip()} row")
    want(f"rnic_kping: perf: {3 * pings * size} bytes checked, 0 bad" in guest, "rnic_kping's total")
    want("iw_cm: QP 0 closed (graceful, firmware state 0)" in guest, "the graceful close")
    import re
    want(re.search(r"rnic_kping: after the graceful close ([1-4]) of \1 posted receives completed with "
                   r"IB_WC_WR_FLUSH_ERR", guest) is not None, "the kernel QP's posted receives flushed after the close")
    want("rnic_kping: PASS (perf" in guest and "RNIC-GUEST: PASS (rnic_kping)" in guest, "the consumer's verdict")
elif mode == "kping":
    want("node_type 4: RNIC, port 1 1: DOWN" in guest or "node_type 4: RNIC, port 1 2: INIT" in guest,
         "the RDMA core's view of the device before the interface is up (node type RNIC)")
    want("gid 0200:0000:000a:0000:0000:0000:0000:0000" in guest, "GID 0 = the station MAC")
    want("up, port 1 4: ACTIVE" in guest, "port 1 active once rnic0 has its address")
    want("resolved to device rnic0 port 1 (node type iWARP RNIC)" in guest, "rdma_cm resolved host b to rnic0")
    want("iw_cm: QP 0 connect 10.0.0.1:" in guest and "-> 10.0.0.2:7174: established (0)" in guest,
         "the firmware's connect through iw_cm")
    want(f"rnic_kping: {pings} pings of {size} bytes, {pings * size} bytes checked, 0 bad" in guest,
         "rnic_kping's own check line")
    want("iw_cm: QP 0 closed (graceful, firmware state 0)" in guest and "rnic_kping: disconnected" in guest,
         "the graceful close (rdma_disconnect, firmware closing, idle)")
    # After the graceful close rnic.ko moves the Idle QP to Error: the 4 receives still posted complete
    # IB_WC_WR_FLUSH_ERR, each once (the consumer checks each wr_id), as a user QP's do.
    want("rnic_kping: after the graceful close 4 of 4 posted receives completed with IB_WC_WR_FLUSH_ERR" in guest,
         "the kernel QP's posted receives flushed after the graceful close")
    want("rnic_kping: PASS" in guest and "RNIC-GUEST: PASS (rnic_kping)" in guest, "the consumer's verdict")
    # A connect to a port where nothing listens fails cleanly (the model drops the SYN: a timeout).
    want("-> 10.0.0.2:7175: failed (-110)" in guest and "rnic_kping: rdma_cm event unreachable, status -110" in guest
         and "rnic_kping result=-110 against port 7175" in guest, "the failed connect to port 7175")
    want("RDMA core: device unregistered" in guest and ": removed" in guest, "teardown lines")
    # MPA private data of the connect, as host b's firmware received it in the Request.
    want('MPA Request with 16 bytes of private data "rnic_kping_hello"' in sim, "the connect's private data at host b")
    want("private data 16 out, 0 back" in guest, "the driver sent the connect's private data")
elif mode == "kserve":
    import re
    want("rnic_kping: server: listening on port 7174" in guest and "iw_cm: listening on 0.0.0.0:7174" in guest,
         "the listener (rdma_listen, iw_cm create_listen)")
    want(len(re.findall(r"iw_cm: connect request 10\.0\.0\.2:\d+ -> 10\.0\.0\.1:7174 \(peer \d+, MPA rev 2, IRD 1 ORD 1",
                        guest)) == 2, "two connect requests from host b delivered by the next_peer poller")
    # The active side's MPA Request private data, checked byte for byte by the guest in each request.
    want(len(re.findall(r"rnic_kping: server: connect request from 10\.0\.0\.2:\d+ on device rnic0: IRD 1 ORD 1, "
                        r"20 bytes of private data", guest)) == 2 and
         guest.count('rnic_kping: server: the request\'s private data is the expected 20 bytes '
                     '"rping-client-request", byte for byte') == 2, "host b's Request private data, checked by the guest")
    want(re.search(r"iw_cm: reject of peer \d+ on port 7174 with 19 bytes of private data: sent", guest) is not None and
         "rnic_kping: server: rejected the connect request with 19 bytes of private data (0)" in guest,
         "the guest's reject of the first request")
    want('the peer rejected the connection (MPA Reply with R = 1, 19 bytes of private data "rnic_kping: not now")'
         in sim, "host b's firmware got the Rejected bit and the reject's private data")
    want(re.search(r"rping: connect attempt \d+ failed \(connection refused\)", sim) is not None,
         "host b's connect refused by the reject (then tried again)")
    want(re.search(r"iw_cm: QP 0 accept of peer \d+ on port 7174: established \(status 0\), 19 bytes of private data",
                   guest) is not None and "rnic_kping: server: accepted (QP 0) with 19 bytes of private data" in guest,
         "the guest's accept")
    want('MPA Reply accepts with 19 bytes of private data "rnic_kping: welcome"' in sim,
         "host b's firmware got the accept's private data")
    want(f"rnic_kping: server: {pings} pings of {size} bytes, {pings * size} bytes checked, 0 bad" in guest,
         "the guest's check of every start buffer it read")
    # Host b closes gracefully; the model moves the guest's RTS QP to Error when the peer's FIN arrives
    # ("QP 0 to Error: TCP connection closed"), so the driver's watch delivers an abortive close.
    want("iw_cm: QP 0 left RTS without the consumer (firmware state 4)" in guest and
         "iw_cm: QP 0 closed (abortive, firmware state 4)" in guest and
         "rnic_kping: server: the client disconnected" in guest and "b.rnic.rdma: QP 0: graceful close done" in sim,
         "host b's disconnect seen by the guest (its QP watch)")
    want("rnic_kping: PASS (server" in guest and "RNIC-GUEST: PASS (rnic_kping)" in guest, "the consumer's verdict")
    want("rnic_kping stays loaded, its listener open" in guest and
         "iw_cm: listener on port 7174 destroyed; port closed; no listener left, next_peer polling stopped" in guest and
         "RDMA core: device unregistered" in guest and "rnic_kping removed after rnic" in guest and
         "rnic_kping: server: listener closed at module exit" in guest, "rnic.ko removed under an open listener")
    # destroy_listen closed the port in the device (unlisten): the guest's driver and the model's
    # firmware both say so, and no backlog peer was left to reset.
    want("iw_cm: port 7174 no longer listening, 0 backlog peers reset" in guest and
         "a.rnic.cp: port 7174: no longer listening; 0 backlog peers reset" in sim,
         "destroy_listen's unlisten of port 7174 (guest and model)")
elif mode == "rdmacore":
    import re
    want("DEVINFO: hca_id:\trnic0" in guest and "DEVINFO: \ttransport:\t\t\tiWARP (1)" in guest and
         "DEVINFO: \tvendor_id:\t\t\t0x1a4e" in guest and "PORT_ACTIVE (4)" in guest,
         "ibv_devinfo shows rnic0 (iWARP, vendor 0x1a4e, port active) through the provider")
    out = guest.split("RNIC-GUEST: RPING-OUT begin", 1)[-1].split("RNIC-GUEST: RPING-OUT end", 1)[0]
    echoes = re.findall(r"^ping data: rdma-ping-(\d+): ", out, re.M)
    want(echoes == [str(i) for i in range(pings)], f"rping printed echoes {echoes}, not 0..{pings - 1}")
    want("data mismatch" not in out and "failed" not in out and "error" not in out, f"rping's complaints: {out!r}")
    want(re.search(r"RNIC-GUEST: rping exit status 0 after", guest) is not None, "rping's exit status 0")
    want("REFUSED-OUT: cma event RDMA_CM_EVENT_UNREACHABLE, error -110" in guest and
         re.search(r"RNIC-GUEST: rping against port 7175 exit status [1-9]\d* after", guest) is not None and
         "-> 10.0.0.2:7175: failed (-110)" in guest, "rping against port 7175 failed cleanly (unreachable)")
    want("RNIC-GUEST: PASS (rping)" in guest, "the guest's verdict")
    want("RDMA core: device unregistered" in guest and ": removed" in guest, "teardown lines")
elif mode == "tool":
    want(f"rnic_rping: PASS {pings} pings" in guest and "RNIC-GUEST: PASS (rnic_rping)" in guest, "the tool's verdict")
    want(" #bytes     #iterations" in guest, "the tool's perftest-style table")
    want(": removed" in guest and "released QP" in guest, "teardown lines (QP released, driver removed)")
else:
    want("rnic: selftest: PASS" in guest and "RNIC-GUEST: PASS" in guest, "the guest's verdict")
    want(": removed" in guest and "destroyed" in guest, "teardown lines (QP destroyed, driver removed)")
for b in bad: print("FAIL:", b)
print("checked: guest PASS; host b checked", r["integrity"]["bytes_checked"], "bytes; BAR accesses",
      q["bar_reads"] + q["bar_writes"], "at", round(r["wallclock"]["qemu"]["bar_wall_us_mean"], 1), "us wall each")
sys.exit(1 if bad else 0)
PY
