// Scenario keys of the RNIC (rnic.*: buffer memory, TCP engine, framing, RDMA engine, context
// cache) and the checks that refuse combinations of them that cannot work, naming the key.
#include <algorithm>
#include <string>

#include "config/scenario.h"
#include "config/units.h"
#include "host_identity.h"
#include "proto/net.h"
#include "schema_parts.h"

namespace rnic::platform {

using namespace config::literals;

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
    rdma.integer("wqe_fetch_depth", 1,
                 "QPs whose next work requests the transmit side reads at once: 1 reads a QP's WQEs when its turn "
                 "starts and waits for them (the model the recorded results were measured with); N > 1 keeps up "
                 "to N reads in flight, ahead of the QPs' turns, so a host posting on many QPs is not paced by "
                 "one PCIe round trip per QP (docs/architecture.md, \"WQE fetches in flight across QPs\")",
                 1, 64);
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

}  // namespace rnic::platform
