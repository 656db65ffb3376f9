#!/usr/bin/env python3
"""Boots the RNIC driver guest in QEMU with the modelled RNIC attached to it through
x-pci-proxy-dev, and rnic-sim serving the device (host a is the guest, host b is simulated and runs
rping's server). Makes the socketpair: one end to rnic-sim as qemu.fd, the other to QEMU as the
proxy's fd. Prints the guest's console and rnic-sim's output; exit status 0 when the guest printed
"RNIC-GUEST: PASS" and rnic-sim ended with status 0.

  driver/linux/guest/run-guest.py [--sim build/bin/rnic-sim] [--pings 20] [--size 3000]
      [--timeout 240] [--log-dir DIR] [--shell] [-- extra rnic-sim arguments]

The kernel and initramfs come from driver/linux/guest/mkinitramfs.sh (run first, or by this).
"""
import argparse
import os
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
# --tool kserve: what host b's rping client sends in its MPA Requests and the guest's server expects.
KSERVE_REQUEST_PD = "rping-client-request"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sim", default=os.path.join(REPO, "build", "bin", "rnic-sim"))
    ap.add_argument("--pings", type=int, default=20)
    ap.add_argument("--size", type=int, default=3000)
    ap.add_argument("--timeout", type=float, default=240.0, help="wall seconds for the whole run")
    ap.add_argument("--log-dir", default=None, help="where guest.log, sim.log and results.json go")
    ap.add_argument("--tool", choices=["rping", "perf", "kping", "kperf", "kserve", "rdmacore"], default=None,
                    help="run from user space over /dev/rnic0 instead of the module's self-test: rping (rnic_rping "
                         "against host b's rping server), perf (rnic_perf against host b's perf_server) or kping (the kernel "
                         "consumer rnic_kping.ko through rdma_cm and the RDMA core against host b's rping server) or kperf "
                         "(rnic_kping.ko mode=perf: RDMA Writes, RDMA Reads and Sends through the RDMA core against "
                         "host b's perf_server; --pings operations of --size bytes each) or kserve (rnic_kping.ko "
                         "mode=server: the guest listens through rdma_cm, rejects host b's first connect and serves "
                         "the next; host b runs rping's client against it, retrying until the guest listens) or rdmacore "
                         "(Debian's rping, unmodified, through librdmacm, libibverbs and rnic.ko's provider "
                         "librnic-rdmav34.so, against host b's rping server; then once against port 7175, where "
                         "nothing listens, which must fail)")
    ap.add_argument("--perf-args", default="-t,all,-s,4096,-n,1000,-q,16",
                    help="rnic_perf's arguments, ',' between words (default %(default)s)")
    ap.add_argument("--shell", action="store_true", help="the guest drops to a shell at the end")
    ap.add_argument("--sim-log", default="info", help="rnic-sim --log spec (host=debug: every BAR access and DMA)")
    ap.add_argument("--param", action="append", default=[],
                    help="another rnic.ko module parameter NAME=VALUE (e.g. bar_bench=200, inject=bad_dma+bad_doorbell)")
    ap.add_argument("extra", nargs="*", help="more rnic-sim arguments (after --)")
    a = ap.parse_args()

    log_dir = a.log_dir or os.path.join(REPO, "build", "rnic-guest", "run")
    os.makedirs(log_dir, exist_ok=True)
    out = subprocess.run([os.path.join(HERE, "mkinitramfs.sh")], check=True, capture_output=True, text=True)
    kernel, initrd = out.stdout.split()

    sim_end, qemu_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    sim_fd, qemu_fd = sim_end.fileno(), qemu_end.fileno()
    results = os.path.join(log_dir, "results.json")
    if a.tool in ("perf", "kperf"):
        workload = ["--set", "workload.type=perf_server"]
    elif a.tool == "kserve":
        # The guest is the server: host b's client connects until the guest listens (a SYN to a closed
        # port goes unanswered, so each early attempt times out), and the MPA timeout covers the guest's
        # way from the connect request through rdma_cm to its accept (wall time under TCG).
        workload = ["--set", "workload.type=rping", "--set", "workload.rping.role=server",
                    "--set", f"workload.rping.count={a.pings}", "--set", f"workload.rping.size={a.size}",
                    "--set", "workload.rping.timeout=120s", "--set", "workload.rping.connect_attempts=100",
                    "--set", "workload.rping.retry_interval=1s", "--set", "rnic.mpa.timeout=5s",
                    # MPA Request private data the guest checks byte for byte (rnic_kping private_data=)
                    "--set", f"workload.rping.private_data={KSERVE_REQUEST_PD}",
                    "--set", "rnic.mpa.revision=2"]  # the RFC 6581 IRD/ORD word reaches the connect request
    else:
        workload = ["--set", "workload.type=rping", "--set", f"workload.rping.count={a.pings}",
                    "--set", f"workload.rping.size={a.size}", "--set", "workload.rping.timeout=120s"]
    sim_cmd = [a.sim, "--set", "host_bus.transport=qemu", "--set", f"qemu.fd={sim_fd}"] + workload + [
               "--set", f"simulation.time_limit={int(a.timeout)}s", "--results", results,
               "--log", a.sim_log] + a.extra
    params = ",".join([f"rping_count={0 if a.tool else a.pings}", f"rping_size={a.size}", "ip=10.0.0.1",
                       "mac=02:00:00:00:00:0a", "server_ip=10.0.0.2", "server_port=7174"] + a.param)
    append = f"console=ttyS0 loglevel=7 panic=-1 rnic_params={params}" + (" rnic_shell=1" if a.shell else "")
    if a.tool == "rping":
        append += f" rnic_tool=rnic_rping,-a,10.0.0.2,-p,7174,-C,{a.pings},-S,{a.size}"
    elif a.tool == "kping":
        append += (f" rnic_ifaddr=10.0.0.1/24 rnic_kping=server_ip=10.0.0.2,server_port=7174,count={a.pings},"
                   f"size={a.size},private_data=rnic_kping_hello rnic_kping_refused=7175")
    elif a.tool == "kperf":
        append += (f" rnic_ifaddr=10.0.0.1/24 rnic_kping=mode=perf,server_ip=10.0.0.2,server_port=18515,"
                   f"count={a.pings},size={a.size},depth=8")
    elif a.tool == "kserve":
        append += (f" rnic_ifaddr=10.0.0.1/24 rnic_kping=mode=server,server_port=7174,count={a.pings},"
                   f"size={a.size},reject=1,keep_listening=1,private_data={KSERVE_REQUEST_PD} rnic_kping_keep=1")
    elif a.tool == "rdmacore":
        # rping's -v prints each ping's echo, -V compares it with what was sent (librdmacm/examples/rping.c).
        append += (f" rnic_ifaddr=10.0.0.1/24 rnic_rdmacore=-c,-a,10.0.0.2,-p,7174,-C,{a.pings},-S,{a.size},-v,-V"
                   " rnic_rdmacore_refused=7175")
    elif a.tool == "perf":
        append += f" rnic_tool=rnic_perf,-a,10.0.0.2,-p,18515,{a.perf_args}"
    qemu_cmd = ["qemu-system-x86_64", "-accel", "tcg", "-cpu", "max", "-m", "256M", "-smp", "1",
                "-object", "memory-backend-memfd,id=mem,size=256M,share=on", "-machine", "pc,memory-backend=mem",
                "-nographic", "-no-reboot", "-monitor", "none", "-nic", "none",
                "-kernel", kernel, "-initrd", initrd, "-append", append,
                "-device", f"x-pci-proxy-dev,id=rnic0,fd={qemu_fd}"]
    print("rnic-sim:", " ".join(sim_cmd), flush=True)
    print("qemu:", " ".join(qemu_cmd), flush=True)
    t0 = time.monotonic()
    with open(os.path.join(log_dir, "sim.log"), "w") as sim_log, open(os.path.join(log_dir, "guest.log"), "w") as glog:
        # From the source tree: the default scenario and its relative paths resolve there.
        sim = subprocess.Popen(sim_cmd, pass_fds=[sim_fd], stdout=sim_log, stderr=subprocess.STDOUT, cwd=REPO)
        sim_end.close()
        qemu = subprocess.Popen(qemu_cmd, pass_fds=[qemu_fd], stdin=None if a.shell else subprocess.DEVNULL,
                                stdout=None if a.shell else glog, stderr=subprocess.STDOUT)
        qemu_end.close()
        status = "timeout"
        deadline = time.monotonic() + a.timeout
        while time.monotonic() < deadline:
            try:
                qemu.wait(timeout=0.2)
                status = f"qemu exit {qemu.returncode}"
                break
            except subprocess.TimeoutExpired:
                pass
            if sim.poll() is not None:
                # rnic-sim is gone (a refused scenario, a crash): the guest would only time out.
                time.sleep(1)
                status = f"rnic-sim ended first (exit {sim.returncode}); qemu stopped"
                break
        if qemu.poll() is None:
            qemu.kill()
            qemu.wait()
        try:
            sim.wait(timeout=30)
        except subprocess.TimeoutExpired:
            sim.kill()
            sim.wait()
    wall = time.monotonic() - t0
    guest = open(os.path.join(log_dir, "guest.log")).read() if not a.shell else ""
    simout = open(os.path.join(log_dir, "sim.log")).read()
    for line in guest.splitlines():
        if "RNIC-GUEST" in line or "rnic" in line or line.startswith((" #bytes", " 3", " 1", " 6", " op ", " write",
                                                                       " read", " send", " fetchadd", "---")):
            print("guest:", line.rstrip())
    for line in simout.splitlines():
        if line.startswith("rnic-sim:") or " error " in line or "rping" in line or "status:" in line or "qemu:" in line or "Gb/s" in line:
            print("sim:", line.rstrip())
    passed = "RNIC-GUEST: PASS" in guest
    print(f"run-guest: {status}; rnic-sim exit {sim.returncode}; guest {'PASS' if passed else 'no PASS'}; "
          f"{wall:.1f} s wall; logs in {log_dir}", flush=True)
    return 0 if passed and sim.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
