// Scenario keys of the workload (workload.*: what the hosts run) and the checks that refuse a
// workload the platform cannot run as configured, naming the key.
#include <algorithm>
#include <string>

#include "config/scenario.h"
#include "config/units.h"
#include "host_identity.h"
#include "proto/net.h"
#include "schema_parts.h"

namespace rnic::platform {

using namespace config::literals;

namespace {

// Send regions as address space only, their bytes counted in the shared memory as they come.
bool shared_send_regions(const config::scenario& s) {
    return s.get_string("rnic.buffer.send_regions") == "shared";
}

}  // namespace

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
    wl.enumeration("idle_poll", "pass",
                   "How a polling CPU of incast, all_to_all and permutation waits while its CQ is empty: pass (runs "
                   "every empty pass, a wake-up each poll interval on every host) or sleep (sleeps until a "
                   "completion is written and polls again at the instant its passes would have; the same poll "
                   "instants, but events due at one instant may be taken in another order, so results differ "
                   "within that noise; a 256-host permutation ran 8-31% faster)",
                   {"pass", "sleep"});
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

}  // namespace rnic::platform
