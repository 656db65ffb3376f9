#include "scenario_schema.h"

#include "schema_parts.h"

#include "config/scenario.h"
#include "config/units.h"
#include "host_identity.h"
#include "proto/net.h"

#include <cstdio>

namespace rnic::platform {

using namespace config::literals;

namespace {

// Send regions as address space only, their bytes counted in the shared memory as they come.
bool shared_send_regions(const config::scenario& s) {
    return s.get_string("rnic.buffer.send_regions") == "shared";
}

void declare_simulation(config::node& root) {
    auto& sim = root.object("simulation", "Kernel settings");
    sim.integer("seed", 1,
                "Seed of every random choice (TCP initial sequence numbers, payload patterns); --seed overrides", 0);
    sim.time("quantum", "1us", "Global TLM quantum: how far a host CPU may run ahead before it synchronises", 1_ns,
             1_ms);
    sim.time("time_limit", "10s", "Simulated-time limit; the run stops there even if the workload is not done", 1_us,
             3600_s);
    sim.time("watchdog", "1s",
             "Stuck-run watchdog: a run whose NICs take no work request, write no completion, send or receive no "
             "frame and execute no firmware command for this long while the workload is not done stops with "
             "status 'stuck' (exit 1) and a diagnostic dump (results key watchdog); 0 turns it off. Off with a "
             "real peer or a QEMU guest",
             0_ns, 3600_s);
    sim.enumeration("resource_order", "time",
                    "How the shared resources without a key of their own serve requests that the loosely-timed blocks "
                    "hand over out of time order: each direction of a PCIe link, host memory's DMA port, the DMA "
                    "channels, the RDMA engine's pipelines and the MPA CRC datapaths. call: each request after every "
                    "request handed over before it, the model before 2026-11-29 (a WQE fetch waits behind CQE writes a "
                    "completion handler booked for later, leaving the link idle); time (default): the earliest idle "
                    "gap at or after the request is ready, as an arbiter would (posted PCIe writes keep their order). "
                    "The TCP transmitter and the links have their own keys (rnic.tcp.tx_order, link.order), buffer "
                    "memory its port_order",
                    {"call", "time"});
    sim.boolean("live_objects", false,
                "Add the results section live_objects: per RNIC at the end of the run, the QPs, CQs, valid STags, "
                "buffer-memory regions and TCP connections (and those in TIME-WAIT) still alive, for leak checks");
}

void declare_link(config::node& root) {
    auto& link = root.object("link", "The Ethernet link between the two hosts");
    link.rate("rate", "100Gbps", "Line rate", 1e6, 1.6e12);
    link.time("propagation", "10ns",
              "One-way propagation delay (default: a back-to-back cable of about 2 m at 5 ns/m; 100 m of fibre is "
              "500ns)",
              0, 1_s);
    link.integer("mtu", 1500, "IP MTU in bytes (standard Ethernet 1500, jumbo up to 9000)", 576, 9000);
    link.enumeration("order", "time",
                     "How each link's wire serves frames handed over out of time order: call (each frame after "
                     "every frame handed over before it, the model before 2026-11-29) or time (default: the earliest "
                     "idle gap at or after the frame is ready; what rnic.tcp.tx_order = time needs)",
                     {"call", "time"});
    for (const char* dir : {"a_to_b", "b_to_a"}) {
        declare_faults(link.object(dir, std::string("Faults on frames from host ") + dir[0] + " to host " + dir[5] +
                                            " (each seeded from simulation.seed)"),
                       "");
    }
}

void declare_hosts(config::node& root) {
    auto& hosts = root.array("hosts",
                             "The hosts by index, each with host memory, a host bus and an RNIC; a host named here may "
                             "set its own link (star, "
                             "leaf_spine), bus and memory timing (hosts beyond the array: derived, see topology.hosts)",
                             2, 256);
    hosts.defaults({{{"name", "a"}, {"mac", "02:00:00:00:00:0a"}, {"ipv4", "10.0.0.1"}},
                    {{"name", "b"}, {"mac", "02:00:00:00:00:0b"}, {"ipv4", "10.0.0.2"}}});
    auto& host = hosts.element();
    host.string("name", "host", "Host name (the top of its modules' hierarchical names)");
    host.string("mac", "02:00:00:00:00:01", "The RNIC's station MAC address");
    host.string("ipv4", "10.0.0.1", "The RNIC's IPv4 address");
    host.enumeration("mpa_rtr", "same",
                     "This RNIC's ready-to-receive messages when they differ from rnic.mpa.rtr (two NICs with no "
                     "RTR option in common, RFC 6581 §9.2)",
                     {"same", "write,read", "write", "read"});
    host.enumeration("vitcp_reliability", "same",
                     "This RNIC's VI/TCP reliability level when it differs from rnic.vitcp.reliability (two ends "
                     "whose levels differ: the passive end refuses with ConnectReject, seed 003 §3.3)",
                     {"same", "unreliable", "reliable_delivery", "reliable_reception"});
    host.size("buffer_capacity", "0B",
              "This RNIC's buffer memory capacity when it differs from rnic.buffer.capacity (0: the same): NICs "
              "of different sizes on one network",
              0, 4_GiB);
    declare_host_link(host);
    declare_host_bus(host);
}

// Host b replaced by a real machine behind a socket bridge (models/link/socket_bridge.h), e.g. a
// QEMU guest running Linux soft-iWARP (tools/siw-peer). hosts.1.ipv4 is then the real peer's address;
// host a learns its MAC by ARP.
void declare_peer(config::node& root) {
    auto& peer = root.object("peer", "What is at the far end of the link (host b): the simulated host or a real one");
    peer.enumeration("kind", "simulated",
                     "\"simulated\": host b is simulated; \"socket\": host b is a real machine whose Ethernet frames "
                     "come over a TCP socket in QEMU's -netdev socket format (tools/siw-peer/README.md)",
                     {"simulated", "socket"});
    peer.string("address", "127.0.0.1", "Where the peer's socket is (host name or numeric address)");
    peer.integer("port", 0, "The peer's socket port (required with kind \"socket\")", 0, 65535);
    peer.boolean("listen", false, "Listen on address:port for the peer to connect, instead of connecting to it");
    peer.time("open_timeout", "10s", "Wall-clock time to wait for the connection before giving up", 1_ms, 3600_s);
    peer.boolean("realtime", true,
                 "Keep simulated time from running ahead of wall-clock time while the peer is connected");
    peer.time("realtime_slack", "1ms", "How far simulated time may run ahead of wall-clock time", 0, 10_s);
    peer.time("poll_interval", "20us", "Simulated time between two polls of the socket", 100_ns, 10_ms);
}

void declare_rnic(config::node& root) {
    auto& rnic = root.object("rnic", "The RNIC (same for both hosts)");
    rnic.frequency("clock", "500MHz", "Datapath clock of the DMA, TCP, framing and RDMA engines", 1e6, 10e9);

    rnic.enumeration("rx_path", "buffering",
                     "What the NIC does with an out-of-order TCP segment: hold it in buffer memory until the hole "
                     "is filled (buffering); place the FPDUs its MPA markers locate (markers, needs "
                     "rnic.mpa.markers); or assume FPDUs start at segment starts, check and place (aligned, seed 000); "
                     "or take the VI segment start the TCP urgent pointer names, check and place (urgent, VI/TCP's "
                     "Urgent Marker, seed 003 §3.7, needs rnic.framing vitcp and rnic.vitcp.urgent_marker)",
                     {"buffering", "markers", "aligned", "urgent"});
    rnic.enumeration("framing", "mpa",
                     "What frames DDP segments in the TCP stream: MPA (RFC 5044, rnic.mpa.*), IFT (seed 001, "
                     "draft-williams-iwarp-ift-00: Header CRC and Payload CRC, no markers, no padding) or RDMA/TCP "
                     "(seed 000, draft-williams-rdmatcp-00: Send, RDMA_Write, Read Request/Response segments with a "
                     "64-bit Connection ID, message numbers and a CRC-32; no atomics). The MPA Request/Reply stays "
                     "as the switch into RDMA mode; or VI/TCP (seed 003, draft-dicecco-vitcp-01: a whole protocol, "
                     "its CE exchange instead of the MPA Request/Reply, VI segments, rnic.vitcp.*; no atomics). Both "
                     "hosts use the same",
                     {"mpa", "ift", "rdmatcp", "vitcp"});
    auto& vitcp =
        rnic.object("vitcp", "VI/TCP (seed 003, rnic.framing = vitcp): what this end proposes in its CE header");
    vitcp.boolean("crc", false,
                  "Offer the CRC option (seed 003 §3.6): a trailer CRC on every segment if both ends offer it");
    vitcp.boolean("urgent_marker", false,
                  "Send the Urgent Marker option (seed 003 §3.7): the peer then designates the first byte of a VI "
                  "segment in each TCP segment as urgent, which rnic.rx_path urgent uses to place out of order");
    vitcp.enumeration("reliability", "reliable_delivery",
                      "Reliability level in the Calling Attributes (seed 003 §3.3; both ends must match or the passive "
                      "end sends ConnectReject); each level's error behaviour is docs/framings.md's, and at "
                      "reliable_reception a send completes on the peer's Message ACK (seed 003 §3.2)",
                      {"unreliable", "reliable_delivery", "reliable_reception"});
    vitcp.integer("mtu", 1048576,
                  "VI MTU proposed (the largest transfer of one descriptor, seed 003 §2.2.1, §3.3; the lesser of the "
                  "two is agreed); negotiated and reported",
                  1, 4294967295LL);
    vitcp.integer("rdma_read_window", 16,
                  "Outstanding RDMA Reads this end proposes (seed 003 §2.2.2.2.6; the lesser is agreed and becomes "
                  "the connection's IRD and ORD, within rnic.rdma.ird/ord)",
                  0, 65535);
    vitcp.boolean("raw_connect_requests", false,
                  "Test mode: a connect with private data sends those bytes as its ConnectRequest and a refusal's "
                  "answer comes back to the driver (the vi_ce_* probes); off, VI/TCP refuses private data");
    auto& dma = rnic.object("dma", "DMA engine");
    dma.integer("channels", 4, "DMA channels", 1, 64);
    dma.number("setup_cycles", 8, "Cycles to set up one transfer", 0, 1e6);
    dma.number("bytes_per_cycle", 7.25,
               "Effective datapath bytes per cycle of one channel (7.25 x 500 MHz = 3.6 GB/s), fitted to pcie-bench's "
               "single-DMA read latency over size (docs/calibration.md)",
               0, 1024);
    dma.integer("max_outstanding_reads", 32, "Bus read transfers in flight across the engine (0: only the bus's tags)",
                0, 4096);
    dma.enumeration("markers", "skip",
                    "skip: the DMA engine removes MPA markers on the fly (one transfer per contiguous placement); "
                    "fragment: one transfer per marker-free run, as a general-purpose DMA must (seed 001 section 6)",
                    {"skip", "fragment"});

    auto& buf = rnic.object("buffer", "On-NIC buffer memory");
    buf.size("capacity", "4MiB", "Capacity", 64_KiB, 4_GiB);
    buf.size("reassembly_pool", "0B",
             "Most out-of-order receive bytes held at once, all connections together (0: all the capacity the "
             "connections' send regions leave free); sizes the reassembly pool apart from the send regions",
             0, 4_GiB);
    buf.enumeration("send_regions", "reserved",
                    "reserved: each connection carves rnic.tcp.send_buffer bytes out of the capacity at connect; "
                    "shared: a connection's send stream takes memory only for the bytes it holds until acknowledged "
                    "(still at most rnic.tcp.send_buffer), shared with the reassembly pool, so thousands of "
                    "connections fit",
                    {"reserved", "shared"});
    buf.size("width", "64B", "Datapath width", 4, 1024);
    buf.frequency("clock", "500MHz", "Clock", 1e6, 10e9);
    buf.time("latency", "10ns", "Access latency (on-chip SRAM)", 0, 1_us);
    buf.enumeration("port_order", "time",
                    "How the one port serves the send stream's appends, the segment reads and the reassembly "
                    "traffic, which the loosely-timed blocks book out of time order: time (an access takes the "
                    "earliest idle gap at or after it is ready, as an arbiter would) or call (each access waits for "
                    "every access booked before it; the model before 2026-11-26, which capped one connection at "
                    "about 61 Gb/s)",
                    {"time", "call"});
    buf.time("sample_interval", "10us", "Interval of the occupancy-over-time series in the results (peak per interval)",
             1_ns, 1_s);

    auto& tcp = rnic.object("tcp", "TCP offload engine (RFC 9293, 5681, 6298)");
    tcp.boolean("ecn", false,
                "Explicit Congestion Notification (RFC 3168): offer it in the SYN, mark new data ECT(0), halve the "
                "window once per window on ECE, echo CE until CWR (a switch marks CE with switch.ecn.enabled)");
    tcp.size("send_buffer", "256KiB", "Send stream held in buffer memory per connection until acknowledged", 16_KiB,
             64_MiB);
    tcp.size("receive_buffer", "256KiB", "Receive window per connection", 16_KiB, 1_GiB);
    tcp.enumeration("window_clamp", "auto",
                    "reassembly: the receive window offered never reaches past the out-of-order bytes the NIC "
                    "holds for the connection plus its free reassembly memory, so the peer is not invited to send "
                    "what would be dropped; none: the window is receive_buffer whatever the memory (the model "
                    "before 2026-11-25); auto: reassembly on the buffering receive path, none on markers and "
                    "aligned (they place whole FPDUs directly and buffer only the rest)",
                    {"auto", "reassembly", "none"});
    tcp.integer("tx_ahead_frames", 8,
                "Segments generated as the link drains: new data segments are built only while fewer than this "
                "many frames are in the transmit pipeline, wait for the wire or are on it (a retransmission then "
                "never queues behind a whole window; 8 is a 12 KB transmit FIFO at a 1500-byte MTU); 0: everything "
                "the windows allow is built at once and queued in front of the link (the model before 2026-11-29)",
                0, 1000000);
    tcp.integer("window_scale", 7, "Window-scale shift offered (RFC 7323)", 0, 14);
    tcp.boolean("sack", false, "Offer SACK (RFC 2018)");
    tcp.boolean("sack_recovery", false,
                "SACK-based loss recovery (RFC 6675) instead of NewReno; needs rnic.tcp.sack (SACK negotiated)");
    tcp.time("delayed_ack", "0ns", "Delayed-ACK timer; 0 acknowledges every segment (RFC 1122 allows up to 500 ms)", 0,
             500_ms);
    tcp.time("rto_initial", "1ms", "Initial retransmission timeout (RFC 6298 says 1 s; a datacenter NIC uses less)",
             1_us, 60_s);
    tcp.time("rto_min", "200us", "Minimum retransmission timeout", 1_us, 60_s);
    tcp.integer("initial_window", 10, "Initial congestion window in segments (RFC 6928)", 1, 1000);
    tcp.number("tx_cycles_per_segment", 40, "Transmit pipeline cycles per segment", 0, 1e6);
    tcp.number("tx_interval_cycles", 20,
               "Cycles between the starts of two frames in the transmit pipeline (its initiation interval; "
               "each frame still spends tx_cycles_per_segment in it); 0: tx_cycles_per_segment, one frame in "
               "the pipeline at a time (the model before 2026-11-29)",
               0, 1e6);
    tcp.enumeration("tx_order", "time",
                    "How the transmit pipeline and the engine's record of its wire (rnic.tcp.tx_ahead_frames) serve "
                    "frames booked out of time order, as a frame built for an append ahead in local time and then "
                    "one built at kernel time: call (the later call waits behind every earlier booking, leaving "
                    "the gap idle; the model before 2026-11-29) or time (default: a frame takes the earliest idle gap "
                    "at or after it is ready, one connection's frames in sequence order; use with link.order = time)",
                    {"call", "time"});
    tcp.number("rx_cycles_per_segment", 50, "Receive pipeline cycles per segment", 0, 1e6);
    tcp.integer("rx_ingress_frames", 0,
                "Frames the on-chip ingress FIFO holds while the receive pipeline is busy (0: unbounded, "
                "frames are only delayed); beyond it frames wait in buffer memory (rx_ingress_buffer) or are dropped",
                0, 1000000);
    tcp.size("rx_ingress_buffer", "0B", "Buffer memory for frames the full ingress FIFO cannot hold (0: none)", 0,
             1_GiB);
    tcp.size("rx_placement_backlog", "0B",
             "Received bytes handed on for placement whose DMA writes may still be on the host bus before the "
             "receive pipeline waits for them (the NIC's write queue; 0: unbounded, the receiver never feels a "
             "slower host bus, as before this key). Set it where a receiver's bus may be slower than the wire",
             0, 1_GiB);
    tcp.integer("max_connections", 64, "Connection table size", 1, 65536);
    tcp.enumeration("retransmit_from", "buffer",
                    "Source of retransmitted bytes: the send stream held in NIC buffer memory until acknowledged "
                    "(buffer), or host memory fetched again by DMA, so NIC buffer holds data only until first sent "
                    "(host)",
                    {"buffer", "host"});

    auto& mpa = rnic.object("mpa", "MPA framing (RFC 5044, RFC 6581)");
    mpa.integer("revision", 1, "MPA revision sent in the Request/Reply", 1, 2);
    mpa.boolean("markers", false, "Ask the peer for markers every 512 bytes (M bit)");
    mpa.boolean("crc", true, "Ask for the CRC32c (C bit); the CRC is used if either side asks");
    mpa.boolean("join_split_fpdus", true,
                "Markers receive path: place FPDUs split across out-of-order segments (a re-segmenting middlebox) "
                "once all their pieces are held, as RFC 5044 Appendix A's marker-using receiver can; false: only "
                "whole FPDUs inside one segment are placed (the model before 2026-11-25)");
    mpa.boolean("pack_fpdus", false,
                "With markers sent, let a TCP segment carry several complete FPDUs when more than one waits "
                "(RFC 5044 section 5 and Appendix A allow packing); off: one FPDU per segment, the form "
                "Wireshark's MPA dissector decodes. Without markers segments are always packed");
    mpa.integer("ird", 16, "Inbound RDMA Read queue depth offered in revision 2", 0, 16383);
    mpa.integer("ord", 16, "Outbound RDMA Read queue depth offered in revision 2", 0, 16383);
    mpa.time("timeout", "10ms", "MPA negotiation timeout", 1_us, 60_s);
    mpa.boolean("peer_to_peer", false,
                "Every connect asks for the peer-to-peer model: the initiator sends a ready-to-receive message "
                "before anything else and the responder waits for it (RFC 6581 §9.2; needs revision 2). The "
                "driver can also ask for it per connection");
    mpa.enumeration("rtr", "write,read",
                    "Ready-to-receive messages this NIC sends and accepts in the peer-to-peer model: zero-length "
                    "RDMA Write (flag C), zero-length RDMA Read (flag D), or both (the zero-length Send, flag B, "
                    "would consume an application receive buffer, RFC 5040 §5.3)",
                    {"write,read", "write", "read"});
    mpa.integer("crc_bytes_per_cycle", 16, "CRC32c datapath width in bytes per cycle", 1, 256);
    mpa.number("cycles_per_fpdu", 1,
               "Framing cycles per FPDU besides one bus word per cycle through the CRC/Marker datapath (pipeline "
               "fill): 1 as measured on the RTL (rtl/, README \"RTL in the loop\"); was 4 before",
               0, 1e6);
    mpa.enumeration("model", "tlm",
                    "Model of the framing unit's CRC/Marker datapath: the C++ codecs with a cycle formula (tlm), or "
                    "the Verilated RTL of rtl/ driven clock by clock (rtl; crc_bytes_per_cycle 8 or 16). Same bytes, "
                    "same beats per FPDU",
                    {"tlm", "rtl"});
    mpa.string("rtl_vcd", "",
               "With model rtl: VCD file of the RTL datapath's first transmitted and first received FPDU; %h in the "
               "name becomes the host name, otherwise only the first host writes it");

    auto& rdma = rnic.object("rdma", "DDP/RDMAP engine");
    rdma.number("cycles_per_wqe", 30, "Cycles to decode and validate one work request", 0, 1e6);
    rdma.number("cycles_per_segment", 12, "Cycles per DDP segment (header build/parse, STag lookup)", 0, 1e6);
    rdma.integer("max_qp", 64, "Queue pairs (BAR0 has doorbell slots for 4096)", 1, 4096);
    rdma.integer("max_cq", 64, "Completion queues (BAR0 has doorbell slots for 2048)", 1, 2048);
    rdma.integer("max_mr", 1024, "Memory regions (STag table entries)", 2, 1 << 24);
    rdma.integer("ird", 16, "Most inbound RDMA Read / atomic requests a QP holds (caps the negotiated IRD)", 1, 16383);
    rdma.integer("ord", 16, "Most outbound RDMA Reads / atomics a QP has in flight (caps the negotiated ORD)", 1,
                 16383);
    rdma.boolean("raw_ulpdu_wqes", false, "Test mode: accept raw-ULPDU work requests (sent verbatim on the wire)");
    rdma.enumeration("atomics", "rmw",
                     "How the atomic unit updates host memory: DMA read, ALU, DMA write under the unit's lock (rmw), "
                     "or PCIe AtomicOp TLPs (pcie_atomicop: FetchAdd/CAS performed by the root complex; masked "
                     "operations as read + CAS, retried until the CAS holds)",
                     {"rmw", "pcie_atomicop"});

    auto& cc = rnic.object("context_cache",
                           "On-chip cache of QP contexts and STag entries kept in host memory (docs/architecture.md)");
    cc.boolean("enabled", false,
               "Contexts live in host memory (allocated by the driver at open) and the engine caches "
               "them; a miss fetches the context over PCIe. false: all contexts on chip, no cost");
    cc.integer("entries", 256,
               "QP contexts the cache holds (assumption: a few hundred, as the active-QP knee of "
               "RNIC scalability studies suggests)",
               1, 65536);
    cc.integer("associativity", 4, "Ways per set: 1 direct mapped .. entries fully associative (must divide entries)",
               1, 65536);
    cc.enumeration("replacement", "lru", "Victim in a full set: least recently used, oldest fill, or seeded random",
                   {"lru", "fifo", "random"});
    cc.integer("seed", 0, "Seed of the random replacement (0: simulation.seed, so that seeds of a sweep vary it)", 0);
    cc.integer("stag_entries", 256,
               "STag entries in their own array (same associativity, capped at this); 0: STag "
               "entries share the QP context array",
               0, 65536);
    cc.size("qp_context_bytes", "256B",
            "Size of one QP context in host memory (assumption after mlx4/ConnectX-3's "
            "256-byte QPC entries)",
            16, 4096);
    cc.size("stag_entry_bytes", "64B",
            "Size of one STag table entry in host memory (assumption after mlx4's 64-byte "
            "dMPT entry, struct mlx4_mpt_entry)",
            8, 1024);

    auto& cp = rnic.object("cp", "Control processor running the firmware");
    cp.frequency("clock", "1GHz", "Clock of the embedded CPU", 1e6, 10e9);
    cp.integer("command_cycles", 1500, "Cycles per firmware command", 0, 100000000);
    cp.integer("event_cycles", 400, "Cycles per connection event", 0, 100000000);
    cp.integer("mpa_frame_cycles", 2500, "Cycles to build or parse an MPA Request/Reply", 0, 100000000);
}

void declare_workload(config::node& root) {
    auto& wl = root.object("workload", "What the hosts run: host a is the client, host b the server");
    wl.enumeration(
        "type", "write_bw",
        "Workload: RDMA Write (perftest ib_write_bw), Send/Receive (ib_send_bw), RDMA Read (ib_read_bw) "
        "bandwidth/latency sweep, FetchAdd on one shared counter (ib_atomic_bw; sizes ignored), or a "
        "seeded random mix of every operation on several QPs checked against a shadow model (mixed), "
        "or one protocol probe (probe: see workload.probe), or librdmacm's rping exchange (rping: see "
        "workload.rping), or the verbs example of platform/workloads (kv_example: key-value lookups by RDMA Read, "
        "updates under a CmpSwap lock by workload.qps clients, workload.iterations each), or the VIPL example "
        "(vipl_example: Send, RDMA Write and RDMA Read descriptors through driver/vipl.h, every byte "
        "checked; for rnic.framing = vitcp), or perftest-style "
        "latency (write_lat, send_lat: ping-pong, half the round trip; read_lat, atomic_lat: post to "
        "completion; one message in flight, perftest's columns), or an operation trace replayed "
        "(trace: see workload.trace), or incast: many senders answer one receiver's synchronised requests "
        "(see workload.incast), or all_to_all / permutation: every host to every other, or each to "
        "one other (a seeded derangement), all flows at once (see workload.matrix), or perf_server: host "
        "b serves a perftest-like client outside the simulation (a QEMU guest's rnic_perf; see "
        "workload.perf_server), or hostile: host b attacks host a with malformed and forbidden "
        "FPDUs while a second QP behaves (see workload.hostile, docs/reliability.md)",
        {"write_bw", "send_bw", "read_bw", "atomic_bw", "mixed", "probe", "rping", "kv_example", "vipl_example",
         "write_lat", "send_lat", "read_lat", "atomic_lat", "trace", "incast", "all_to_all", "permutation",
         "perf_server", "hostile"});
    wl.string("trace", "",
              "workload.type = trace: the operation trace to replay (docs/traces.md; e.g. traces/ops-storage.csv), "
              "relative to the working directory or the project root, or absolute");
    wl.enumeration("lat_atomic", "fetch_add", "atomic_lat: the operation timed (perftest ib_atomic_lat -A)",
                   {"fetch_add", "cmp_swap"});
    wl.size("lat_inline", "192B",
            "write_lat/send_lat: messages up to this size are posted inline (perftest -I; 192 B is the device's "
            "maximum, regmap::kMaxInlineData; 0 turns inline data off)",
            0, 192);
    wl.enumeration("probe", "write_imm",
                   "Protocol probe (workload.type = probe): an error the client commits on purpose and the Terminate "
                   "the server must answer with, or a feature checked end to end (docs/protocol-probes.md)",
                   {"invalid_stag",
                    "out_of_bounds",
                    "pd_mismatch",
                    "access_rights",
                    "read_invalid_stag",
                    "misaligned_atomic",
                    "unexpected_opcode",
                    "invalid_queue",
                    "no_receive_buffer",
                    "msn_out_of_range",
                    "message_too_long",
                    "too_many_reads",
                    "invalidate_bad_stag",
                    "local_invalidate",
                    "send_invalidate",
                    "write_imm",
                    "zero_based",
                    "masked_atomics",
                    "qp_states",
                    "response_order",
                    "abort",
                    "reject",
                    "verbs_misuse",
                    "peer_to_peer",
                    "responder_waits",
                    "listen_backlog",
                    "mpa_timeout",
                    "held_close",
                    "page_list",
                    "device_reset",
                    "resource_limits",
                    "vi_errors",
                    "vi_descriptor",
                    "vi_crc",
                    "unlisten",
                    "send_regions",
                    "cq_overrun",
                    "vi_ce_version",
                    "vi_ce_bad_option",
                    "vi_ce_unknown_option",
                    "vi_transmit_error",
                    "vi_read_window",
                    "rdmatcp_connection_id",
                    "rdmatcp_unknown_type"});
    wl.size_list("sizes", {64, 256, "1KiB", "4KiB", "16KiB", "64KiB"}, "Message sizes, one table row each", 1, 16_MiB,
                 1, 64);
    wl.boolean("all_sizes", false,
               "perftest -a: every power of two from 2 bytes up to 8 MiB that fits the buffer (the whole "
               "workload.buffer for the bandwidth types, half of it for the latency types), instead of workload.sizes");
    wl.integer("iterations", 2000, "Operations per message size and QP (mixed: operations per QP)", 1, 100000000);
    wl.integer("qps", 1,
               "Queue pairs the client opens, each on its own TCP connection to the server's port; "
               "each runs `iterations` operations on its own slice of the buffers (atomic_bw: one shared counter)",
               1, 4096);
    wl.integer("seed", 0, "Seed of the mixed workload's operation sequence; 0 uses simulation.seed", 0);
    wl.integer("queue_depth", 16, "Work requests kept outstanding (perftest --tx-depth)", 1, 4096);
    wl.size("buffer", "1MiB", "Registered buffer on each side; writes walk through it", 4_KiB, 1_GiB);
    wl.integer("port", 18515, "TCP port the server listens on (perftest's default)", 1, 65535);
    wl.enumeration("completion", "poll", "How the client waits: poll the CQ, or arm it and sleep until MSI-X",
                   {"poll", "event"});
    wl.time("poll_interval", "50ns", "CPU time of one empty poll-loop pass", 1_ns, 1_ms);
    wl.enumeration(
        "inject", "none",
        "Make the first RDMA Write bad on purpose to see the peer's Terminate: a wrong STag key, or a "
        "target running past the peer's region (flip_byte: mixed changes a byte of the server's buffer, trace "
        "one that the trace's first Read reads; "
        "skip_lock: kv_example updates without taking the lock, to see lost updates caught)",
        {"none", "invalid_stag", "out_of_bounds", "flip_byte", "skip_lock"});
    wl.integer("client", 0, "Host index running the client of a two-host workload (a star or leaf_spine has more)", 0,
               255);
    wl.integer("server", 1, "Host index running the server of a two-host workload", 0, 255);
    auto& inc = wl.object("incast",
                          "workload.type = incast: N senders answer one receiver's requests at once, round "
                          "after round (workload.qps QPs per sender)");
    inc.integer("receiver", 0, "Host index of the receiver", 0, 255);
    inc.integer("senders", 0, "Senders: the first N hosts other than the receiver (0: every other host)", 0, 255);
    inc.size("size", "64KiB", "Bytes each sender returns per round, split evenly over its QPs", 8, 64_MiB);
    inc.enumeration("sender_wait", "event",
                    "How an idle sender waits for the next request and its completions: event (arm the CQ and sleep "
                    "until MSI-X, as a server blocked on its completion channel; idle hosts then cost no simulation "
                    "time) or poll (every workload.poll_interval, as perftest)",
                    {"event", "poll"});
    inc.time("jitter", "0ns",
             "Service time of a sender: each answer is ready a uniform random time in [0, jitter] after its request "
             "(seeded per sender, QP and round; 0: every sender answers at once, the worst case)",
             0, 1_s);
    inc.integer("rounds", 10, "Request rounds; the next starts when the last flow of this one is in and checked", 1,
                1000000);
    auto& hos = wl.object("hostile",
                          "workload.type = hostile: host b opens one connection per episode and sends "
                          "raw ULPDUs (a few good ones, then one violation of RFC 5040/5041/7306); host a checks "
                          "every Terminate and every byte of its memory (docs/reliability.md)");
    hos.enumeration("mode", "grammar",
                    "grammar: ULPDUs drawn from a grammar of DDP/RDMAP/RFC 7306 headers with random and boundary "
                    "values, each violation with the Terminate it must draw; mutate: a recorded good conversation "
                    "with one byte damaged per episode (any answer, no byte outside the grants)",
                    {"grammar", "mutate"});
    hos.enumeration("stream", "peer",
                    "grammar mode: peer: the peer frames its own FPDUs (MPA without markers), damages the framing "
                    "too (wrong CRC, ULPDU_Length short, long or beyond the stream, ULPDUs shorter than a DDP header "
                    "or longer than the MULPDU) and cuts the TCP stream anywhere (inside FPDUs, several in one "
                    "segment, 1-byte segments); nic: its NIC frames each ULPDU into a segment of its own",
                    {"peer", "nic"});
    hos.integer("episodes", 200, "Connections the peer opens, one violation (or mutation) each", 1, 100000000);
    hos.integer("max_good", 6, "Good ULPDUs before each violation: a uniform count in 0..max_good", 0, 56);
    hos.size("max_payload", "1KiB", "Largest payload of a generated ULPDU (it must fit the peer's MULPDU)", 8, 1400);
    hos.time("answer_timeout", "2ms",
             "Simulated time each side waits for the episode's answer (a Terminate or the end of the stream) "
             "before counting it unanswered",
             1_us, 1_s);
    auto& matrix = wl.object("matrix", "workload.type = all_to_all or permutation: one QP per flow");
    matrix.size("size", "64KiB", "Bytes of each RDMA Write", 8, 16_MiB);
    matrix.integer("messages", 16, "RDMA Writes per flow (workload.queue_depth of them outstanding)", 1, 1000000);
    matrix.time("jitter", "0ns",
                "Each flow starts a seeded uniform 0..jitter after every host is connected (0: all at once)", 0, 1_s);
    auto& rping = wl.object("rping",
                            "librdmacm's rping, byte for byte (workload.type = rping): host a's client "
                            "against host b's server, or against / for a real rping with peer.kind = socket");
    rping.enumeration("role", "client",
                      "With peer.kind = socket: host a runs the rping client (the peer runs `rping -s`) or the server "
                      "(the peer runs `rping -c`); both simulated hosts run their side otherwise",
                      {"client", "server"});
    rping.integer("count", 20, "Pings (rping -C); the server expects this many before the client leaves", 1, 1000000);
    rping.integer("size", 3000,
                  "Ping data size in bytes (rping -S; rping's limits 26 to 65535); 3000 spans several "
                  "FPDUs",
                  26, 65535);
    rping.integer("port", 7174, "TCP port the server listens on (rping's default, -p)", 1, 65535);
    rping.boolean("validate", true,
                  "Check the data: the client compares what came back with what it sent (rping "
                  "-V), the server what it read with rping's pattern");
    rping.time("start_delay", "0s",
               "Client: wait between connect() returning and the first Send (real rping first gets rdma_cm's event "
               "in user space). Against Linux siw use a few ms: siw 6.1 hands the socket to the QP only after "
               "sending its MPA Reply, and an FPDU arriving in between is left unread (siw_accept)",
               0, 10_s);
    rping.integer("connect_attempts", 1,
                  "Client: connect attempts; a refused or timed-out connect is tried again after retry_interval on "
                  "a fresh QP (a real peer that is still booting); rping itself tries once",
                  1, 1000);
    rping.time("retry_interval", "1s", "Client: wait between two connect attempts", 1_ms, 60_s);
    rping.string("private_data", "",
                 "Client: private data of its MPA Request (rdma_connect's), at most 508 bytes; real rping sends none "
                 "(empty)");
    rping.time("timeout", "30s", "Longest wait of one step (accept, connect, a completion) in simulated time", 1_ms,
               3600_s);
    auto& perf = wl.object("perf_server",
                           "workload.type = perf_server: host b's server for the QEMU guest's rnic_perf "
                           "(platform/workloads/perf_server.h has the exchange)");
    perf.integer("port", 18515, "TCP port the server accepts the client on (perftest's default)", 1, 65535);
    perf.size("buffer", "1MiB", "Bytes of the registered buffer the client writes, reads and runs atomics on", 4096,
              64_MiB);
    perf.size("max_send", "4KiB", "Bytes of each posted receive: the largest Send the client may send", 64, 64_KiB);
    perf.integer("receives", 64, "Receives kept posted", 2, 4096);
    perf.time("timeout", "120s", "Longest wait for the client's connection (simulated time, in step with wall time)",
              1_ms, 3600_s);
    auto& mixed = wl.object("mixed", "The mixed workload (workload.type = mixed)");
    mixed.size("min_size", "1B", "Smallest RDMA Write, RDMA Read or Send", 1, 1_MiB);
    mixed.size("max_size", "40KiB",
               "Largest RDMA Write, RDMA Read or Send (sizes spread log-uniformly, with extra "
               "weight around the FPDU and segment sizes)",
               1, 1_MiB);
    mixed.integer("receives", 8, "Receives the server keeps posted per QP (the client sends only into posted ones)", 2,
                  1024);
    mixed.integer("counters", 2, "Shared 64-bit counters every QP FetchAdds on", 1, 64);
    mixed.time("accept_gap", "0ns",
               "CPU time the server spends between accepting one connection and the next (a "
               "slow server: the client's next connection arrives first and waits for its accept)",
               0, 1_s);
    mixed.integer("spare_stags", 4,
                  "Regions per QP the server registers for the client's Sends with Invalidate (and the "
                  "client for its local invalidates), one per invalidate",
                  0, 64);
}

// A host's own buffer_capacity below what buffer memory needs at all (rnic.buffer.capacity's floor).
std::string check_host_buffers(const config::scenario& s) {
    for (std::size_t i = 0; i < s.array_size("hosts"); ++i) {
        const std::string key = "hosts." + std::to_string(i) + ".buffer_capacity";
        const std::uint64_t bytes = s.get_size(key);
        if (bytes != 0 && bytes < 64_KiB) {
            return key + ": " + std::to_string(bytes) +
                   " bytes is less than the 64 KiB a NIC's buffer memory needs "
                   "(0 keeps rnic.buffer.capacity)";
        }
    }
    return "";
}

std::string check_powers_of_two(const config::scenario& s) {
    // The PCIe sizes are checked per host by check_host_buses (schema_host.cpp).
    for (std::uint64_t size : s.get_size_list("workload.sizes")) {
        if (size > s.get_size("workload.buffer")) {
            return "workload.sizes: message size " + std::to_string(size) + " is larger than workload.buffer (" +
                   std::to_string(s.get_size("workload.buffer")) + " bytes)";
        }
    }
    return "";
}

std::string check_context_cache(const config::scenario& s) {
    if (!s.get_bool("rnic.context_cache.enabled")) return "";
    const std::int64_t entries = s.get_int("rnic.context_cache.entries");
    const std::int64_t ways = s.get_int("rnic.context_cache.associativity");
    if (ways > entries || entries % ways != 0) {
        return "rnic.context_cache.associativity: " + std::to_string(ways) + " ways do not divide " +
               std::to_string(entries) + " entries into sets";
    }
    const std::int64_t stags = s.get_int("rnic.context_cache.stag_entries");
    if (stags > 0 && stags % std::min(ways, stags) != 0) {
        return "rnic.context_cache.stag_entries: " + std::to_string(stags) + " entries do not split into sets of " +
               std::to_string(ways) + " (rnic.context_cache.associativity)";
    }
    const std::uint64_t bytes =
        static_cast<std::uint64_t>(s.get_int("rnic.rdma.max_qp")) * s.get_size("rnic.context_cache.qp_context_bytes") +
        static_cast<std::uint64_t>(s.get_int("rnic.rdma.max_mr")) * s.get_size("rnic.context_cache.stag_entry_bytes");
    if (bytes > 0xffffffffu) {
        return "rnic.rdma.max_mr: the context tables would take " + std::to_string(bytes) +
               " bytes of host memory, more than CAP_CTX_BYTES can report (4 GiB)";
    }
    return "";
}

std::string check_workload(const config::scenario& s) {
    const std::string type = s.get_string("workload.type");
    const std::uint64_t qps = static_cast<std::uint64_t>(s.get_int("workload.qps"));
    const std::uint64_t buffer = s.get_size("workload.buffer");
    const std::string inject = s.get_string("workload.inject");
    if (inject == "flip_byte" && type != "mixed" && type != "trace") {
        return "workload.inject: \"flip_byte\" applies to workload.type \"mixed\" or \"trace\" only (type is \"" +
               type + "\")";
    }
    if ((inject == "invalid_stag" || inject == "out_of_bounds") && type != "write_bw") {
        return "workload.inject: \"" + inject + "\" applies to workload.type \"write_bw\" only (type is \"" + type +
               "\")";
    }
    if (inject == "skip_lock" && type != "kv_example") {
        return "workload.inject: \"skip_lock\" applies to workload.type \"kv_example\" only (type is \"" + type + "\")";
    }
    if (type == "perf_server" && s.get_string("host_bus.transport") != "qemu") {
        return "workload.type: \"perf_server\" serves a client outside the simulation: it needs host_bus.transport "
               "\"qemu\"";
    }
    if (type == "incast" || type == "all_to_all" || type == "permutation") return "";  // check_fabric_workload
    // Every client QP needs a QP on both sides and its own TCP connection.
    for (const char* key : {"rnic.rdma.max_qp", "rnic.tcp.max_connections"}) {
        if (qps > static_cast<std::uint64_t>(s.get_int(key))) {
            return "workload.qps: " + std::to_string(qps) + " QPs need as many in " + key + " (it is " +
                   std::to_string(s.get_int(key)) + ")";
        }
    }
    // ... and carves its send stream out of NIC buffer memory (as check_fabric_workload says for incast).
    // ... and leave room for one full segment to be received (as the TCP engine requires at connect).
    const std::uint64_t mss = static_cast<std::uint64_t>(s.get_int("link.mtu")) - 40;
    if (const smallest_buffer b = smallest_buffer_capacity(s);
        !shared_send_regions(s) && qps * s.get_size("rnic.tcp.send_buffer") + mss > b.bytes) {
        return "workload.qps: " + std::to_string(qps) + " connections need " +
               std::to_string(qps * s.get_size("rnic.tcp.send_buffer")) +
               " bytes of send regions (rnic.tcp.send_buffer each) and one segment (" + std::to_string(mss) +
               " bytes) to receive into, more than " + b.key + " (" + std::to_string(b.bytes) + " bytes)";
    }
    if (type == "kv_example") return "";  // its table and scratch areas do not depend on workload.buffer or sizes
    if (type == "mixed") {
        const std::uint64_t min_size = s.get_size("workload.mixed.min_size");
        const std::uint64_t max_size = s.get_size("workload.mixed.max_size");
        if (min_size > max_size) {
            return "workload.mixed.min_size: " + std::to_string(min_size) +
                   " is larger than workload.mixed.max_size (" + std::to_string(max_size) + ")";
        }
        // Each QP's slice of the buffer holds a page of atomic words and two areas of 4 x max_size.
        const std::uint64_t need = qps * (4096 + 8 * ((max_size + 7) / 8 * 8)) + 4096;
        if (need > buffer) {
            return "workload.mixed.max_size: " + std::to_string(max_size) +
                   " bytes needs workload.buffer of at least " + std::to_string(need) +
                   " bytes with workload.qps = " + std::to_string(qps) + " (it is " + std::to_string(buffer) + ")";
        }
        return "";
    }
    if (qps > 1) {
        const std::uint64_t slice = buffer / qps / 8 * 8;
        for (std::uint64_t size : s.get_size_list("workload.sizes")) {
            if (type != "atomic_bw" && size > slice) {
                return "workload.qps: " + std::to_string(qps) + " QPs split workload.buffer into slices of " +
                       std::to_string(slice) + " bytes, smaller than the message size " + std::to_string(size);
            }
        }
    }
    return "";
}

std::string check_fabric_workload(const config::scenario& s) {
    const std::int64_t hosts = host_count(s);
    const std::string type = s.get_string("workload.type");
    if (type == "all_to_all" || type == "permutation") {
        // Per host: all_to_all sends to and receives from every other host, permutation one each.
        const std::int64_t qps = type == "all_to_all" ? 2 * (hosts - 1) : 2;
        for (const char* key : {"rnic.rdma.max_qp", "rnic.tcp.max_connections"}) {
            if (qps > s.get_int(key)) {
                return std::string(key) + ": " + type + " on " + std::to_string(hosts) + " hosts needs " +
                       std::to_string(qps) + " per host, more than " + std::to_string(s.get_int(key));
            }
        }
        const std::uint64_t regions = static_cast<std::uint64_t>(qps) * s.get_size("rnic.tcp.send_buffer");
        if (const smallest_buffer b = smallest_buffer_capacity(s); !shared_send_regions(s) && regions >= b.bytes) {
            return b.key + ": " + std::to_string(qps) + " connections per host need " + std::to_string(regions) +
                   " bytes of send regions, not less than the " + std::to_string(b.bytes) +
                   " bytes of NIC buffer memory";
        }
        const std::uint64_t need = static_cast<std::uint64_t>(qps) * s.get_size("workload.matrix.size") *
                                   static_cast<std::uint64_t>(s.get_int("workload.queue_depth"));
        if (need > s.get_size("host_memory.size") / 2) {
            return "workload.matrix.size: " + std::to_string(qps) + " flows x workload.queue_depth slots of it need " +
                   std::to_string(need) + " bytes per host, more than half of host_memory.size";
        }
        return "";
    }
    if (type == "incast") {
        const std::int64_t receiver = s.get_int("workload.incast.receiver");
        if (receiver >= hosts) {
            return "workload.incast.receiver: host " + std::to_string(receiver) + " does not exist (" +
                   std::to_string(hosts) + " hosts)";
        }
        std::int64_t senders = s.get_int("workload.incast.senders");
        if (senders > hosts - 1) {
            return "workload.incast.senders: " + std::to_string(senders) + " senders need " +
                   std::to_string(senders + 1) + " hosts (there are " + std::to_string(hosts) + ")";
        }
        if (senders == 0) senders = hosts - 1;
        const std::int64_t qps = s.get_int("workload.qps");
        const std::int64_t flows = senders * qps;
        for (const char* key : {"rnic.rdma.max_qp", "rnic.tcp.max_connections"}) {
            if (flows > s.get_int(key)) {
                return std::string(key) + ": the receiver needs " + std::to_string(flows) + " (" +
                       std::to_string(senders) + " senders x workload.qps " + std::to_string(qps) + "), more than " +
                       std::to_string(s.get_int(key));
            }
        }
        // Every connection carves its send stream out of NIC buffer memory (rnic.tcp.send_buffer).
        const std::uint64_t regions = static_cast<std::uint64_t>(flows) * s.get_size("rnic.tcp.send_buffer");
        if (const smallest_buffer b = smallest_buffer_capacity(s); !shared_send_regions(s) && regions >= b.bytes) {
            return b.key + ": the receiver's " + std::to_string(flows) + " connections need " +
                   std::to_string(regions) + " bytes of send regions (rnic.tcp.send_buffer each), not less than the " +
                   std::to_string(b.bytes) + " bytes of NIC buffer memory";
        }
        const std::uint64_t size = s.get_size("workload.incast.size");
        if (size % (static_cast<std::uint64_t>(qps) * 8) != 0) {
            return "workload.incast.size: " + std::to_string(size) +
                   " bytes do not split into workload.qps = " + std::to_string(qps) +
                   " chunks of a multiple of 8 bytes";
        }
        if (static_cast<std::uint64_t>(senders) * (size + 64) > s.get_size("host_memory.size") / 2) {
            return "workload.incast.size: the receiver's buffer of " + std::to_string(senders) + " x " +
                   std::to_string(size) + " bytes needs more than half of host_memory.size";
        }
        return "";
    }
    const std::int64_t client = s.get_int("workload.client"), server = s.get_int("workload.server");
    if (client >= hosts || server >= hosts) {
        return std::string(client >= hosts ? "workload.client" : "workload.server") + ": host " +
               std::to_string(client >= hosts ? client : server) + " does not exist (" + std::to_string(hosts) +
               " hosts)";
    }
    if (client == server)
        return "workload.server: must differ from workload.client (both " + std::to_string(client) + ")";
    if (s.get_string("topology.kind") == "back_to_back" && (client != 0 || server != 1)) {
        return "workload.client: back_to_back runs the client on host 0 and the server on host 1";
    }
    return "";
}

std::string check_peer(const config::scenario& s) {
    if (s.get_string("peer.kind") == "socket" && s.get_int("peer.port") == 0) {
        return "peer.port: kind \"socket\" needs the peer's socket port (1-65535)";
    }
    if (s.get_string("peer.kind") == "socket" && s.get_string("workload.type") != "rping") {
        // The other workloads run their server program on the simulated host b, which a real peer
        // replaces: they would wait for it until the time limit.
        return "workload.type: \"" + s.get_string("workload.type") +
               "\" needs the simulated host b; with peer.kind \"socket\" the real peer runs rping, so use "
               "workload.type \"rping\"";
    }
    return "";
}

std::string check_atomics(const config::scenario& s) {
    if (s.get_string("rnic.rdma.atomics") != "pcie_atomicop") return "";
    for (int host = 0; host < host_count(s); ++host) {
        const std::string kind = s.value_key(host_setting_key(s, host, "host_bus.kind"));
        if (s.get_string(kind) == "pcie") continue;
        return "rnic.rdma.atomics: \"pcie_atomicop\" needs " +
               (kind == "host_bus.kind" ? std::string("host_bus.kind \"pcie\"")
                                        : "a PCIe bus on every host, but " + kind + " is \"pcix\"") +
               " (PCI-X has no AtomicOps)";
    }
    return "";
}

std::string check_framing(const config::scenario& s) {
    const std::string framing = s.get_string("rnic.framing");
    if (framing == "mpa") return "";
    const std::string name = framing == "ift" ? "IFT" : framing == "rdmatcp" ? "RDMA/TCP" : "VI/TCP";
    if (s.get_bool("rnic.mpa.markers"))
        return "rnic.framing: " + name + " has no markers (set rnic.mpa.markers to false)";
    if (s.get_string("rnic.mpa.model") != "tlm") return "rnic.framing: the RTL datapath builds MPA FPDUs only";
    // rnic.tcp.retransmit_from = host works for every framing: RDMA/TCP and VI/TCP re-frame a
    // retransmission with the segment headers they recorded for its stream position (message
    // numbers and Connection ID, seed 000 §3.4, seed 003 §3.2, §2.2.2.2.5: "the same data ...
    // including all VI layer headers and trailers"), the payload fetched again from host memory.
    if (framing == "vitcp") {
        const std::string path = s.get_string("rnic.rx_path");
        if (path != "buffering" && path != "urgent") {
            return "rnic.rx_path: VI/TCP has no " + path +
                   " receive path (markers and aligned belong to MPA and "
                   "seed 000): set rnic.rx_path to \"urgent\" or \"buffering\"";
        }
    }
    // Retransmission from host memory re-frames through the device's framing (framing::reframe),
    // so IFT frames come out as the first time.
    return "";
}

std::string check_sack_recovery(const config::scenario& s) {
    if (s.get_bool("rnic.tcp.sack_recovery") && !s.get_bool("rnic.tcp.sack")) {
        return "rnic.tcp.sack_recovery: SACK-based recovery needs the SACK blocks it reads: set rnic.tcp.sack to true";
    }
    return "";
}

std::string check_peer_to_peer(const config::scenario& s) {
    if (s.get_bool("rnic.mpa.peer_to_peer") && s.get_int("rnic.mpa.revision") < 2) {
        return "rnic.mpa.peer_to_peer: the ready-to-receive message is negotiated in MPA revision 2 (RFC 6581): "
               "set rnic.mpa.revision to 2";
    }
    return "";
}

std::string check_rx_path(const config::scenario& s) {
    if (s.get_string("rnic.rx_path") == "markers" && !s.get_bool("rnic.mpa.markers")) {
        return "rnic.rx_path: \"markers\" needs MPA markers: set rnic.mpa.markers to true";
    }
    if (s.get_string("rnic.rx_path") == "urgent") {
        // Seed 003 §3.7: the peer marks only after it received our Urgent Marker option.
        if (s.get_string("rnic.framing") != "vitcp") {
            return "rnic.rx_path: \"urgent\" is VI/TCP's Urgent Marker (seed 003 §3.7): set rnic.framing to \"vitcp\"";
        }
        if (!s.get_bool("rnic.vitcp.urgent_marker")) {
            return "rnic.rx_path: \"urgent\" needs the peer to mark segment starts, which it does only after our "
                   "Urgent Marker option (seed 003 §3.7): set rnic.vitcp.urgent_marker to true";
        }
    }
    return "";
}

config::schema build() {
    config::schema schema;
    config::node& root = schema.root();
    root.string("name", "unnamed", "Scenario name, copied into the results");
    declare_simulation(root);
    declare_link(root);
    declare_hosts(root);
    declare_peer(root);
    declare_topology(root);
    declare_switch(root);
    declare_host_memory(root);
    declare_pcie(root);
    declare_rnic(root);
    declare_workload(root);
    schema.add_check(check_topology);
    schema.add_check(check_host_buses);
    schema.add_check(check_powers_of_two);
    schema.add_check(check_host_buffers);
    schema.add_check(check_rx_path);
    schema.add_check(check_peer_to_peer);
    schema.add_check(check_sack_recovery);
    schema.add_check(check_framing);
    schema.add_check(check_atomics);
    schema.add_check(check_peer);
    schema.add_check(check_qemu);
    schema.add_check(check_workload);
    schema.add_check(check_context_cache);
    schema.add_check(check_fabric_workload);
    schema.verify();
    return schema;
}

}  // namespace

const config::schema& scenario_schema() {
    static const config::schema schema = build();
    return schema;
}

}  // namespace rnic::platform
