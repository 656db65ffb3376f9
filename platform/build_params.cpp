#include "build_params.h"

#include "proto/mpa.h"
#include "host_identity.h"

#include <cstdio>

#include "core/sim_log.h"
#include "proto/net.h"

namespace rnic::platform {

namespace {
sc_core::sc_time t(const config::scenario& s, const std::string& key) {
    return from_ps(s.get_time_ps(key));
}
std::uint32_t u32(const config::scenario& s, const std::string& key) {
    return static_cast<std::uint32_t>(s.get_int(key));
}
}  // namespace

host_params build_host_params(const config::scenario& s, int host_index) {
    host_params p;
    build_host_side_params(s, host_index, p.memory, p.pcie);

    const double clock = s.get_frequency_hz("rnic.clock");
    rnic_params& n = p.nic;
    n.dma.channels = static_cast<int>(s.get_int("rnic.dma.channels"));
    n.dma.clock_hz = clock;
    n.dma.setup_cycles = s.get_number("rnic.dma.setup_cycles");
    n.dma.bytes_per_cycle = s.get_number("rnic.dma.bytes_per_cycle");
    n.dma.max_outstanding_reads = static_cast<int>(s.get_int("rnic.dma.max_outstanding_reads"));
    n.dma.markers = s.get_string("rnic.dma.markers") == "fragment" ? dma_marker_mode::fragment : dma_marker_mode::skip;
    n.dma.order = resource_order(s);
    n.rdma.order = resource_order(s);
    n.framer.order = resource_order(s);
    n.buffer.capacity = buffer_capacity_of(s, host_index);
    n.buffer.reassembly_pool = s.get_size("rnic.buffer.reassembly_pool");
    n.buffer.shared_send = s.get_string("rnic.buffer.send_regions") == "shared";
    n.buffer.send_address_space =
        static_cast<std::uint64_t>(s.get_int("rnic.tcp.max_connections")) * s.get_size("rnic.tcp.send_buffer");
    n.buffer.width_bytes = static_cast<std::uint32_t>(s.get_size("rnic.buffer.width"));
    n.buffer.clock_hz = s.get_frequency_hz("rnic.buffer.clock");
    n.buffer.latency = t(s, "rnic.buffer.latency");
    n.buffer.port_order = s.get_string("rnic.buffer.port_order") == "call" ? booking::in_order : booking::backfill;
    n.buffer.sample_interval = t(s, "rnic.buffer.sample_interval");
    n.tcp.clock_hz = clock;
    n.tcp.tx_cycles_per_segment = s.get_number("rnic.tcp.tx_cycles_per_segment");
    n.tcp.tx_interval_cycles = s.get_number("rnic.tcp.tx_interval_cycles");
    n.tcp.tx_order = s.get_string("rnic.tcp.tx_order") == "time" ? booking::backfill : booking::in_order;
    n.tcp.rx_cycles_per_segment = s.get_number("rnic.tcp.rx_cycles_per_segment");
    n.tcp.rx_ingress_frames = u32(s, "rnic.tcp.rx_ingress_frames");
    n.tcp.rx_ingress_buffer = s.get_size("rnic.tcp.rx_ingress_buffer");
    n.tcp.rx_placement_backlog = s.get_size("rnic.tcp.rx_placement_backlog");
    n.tcp.mtu = u32(s, "link.mtu");
    // A NIC on a switch with PFC honours its pauses (flow control negotiated on the port).
    n.tcp.honour_pause = s.get_string("topology.kind") != "back_to_back" && s.get_bool("switch.pfc.enabled");
    // The NIC's MAC runs at its own link's rate (a pause lasts quanta x 512 bit times of it).
    n.tcp.line_rate_bps = s.get_rate_bps(host_link_key(s, host_index, "rate"));
    n.tcp.tx_ahead_frames = u32(s, "rnic.tcp.tx_ahead_frames");
    n.tcp.send_buffer = static_cast<std::uint32_t>(s.get_size("rnic.tcp.send_buffer"));
    n.tcp.receive_buffer = static_cast<std::uint32_t>(s.get_size("rnic.tcp.receive_buffer"));
    // auto: clamp where every out-of-order byte needs reassembly memory (the buffering path); the
    // markers and aligned paths place whole FPDUs straight into host memory and buffer only the rest.
    const std::string clamp = s.get_string("rnic.tcp.window_clamp");
    n.tcp.clamp_window_to_reassembly =
        clamp == "reassembly" || (clamp == "auto" && s.get_string("rnic.rx_path") == "buffering");
    n.tcp.window_scale = static_cast<std::uint8_t>(s.get_int("rnic.tcp.window_scale"));
    n.tcp.sack = s.get_bool("rnic.tcp.sack");
    n.tcp.sack_recovery = s.get_bool("rnic.tcp.sack_recovery");
    n.tcp.ecn = s.get_bool("rnic.tcp.ecn");
    n.tcp.delayed_ack = t(s, "rnic.tcp.delayed_ack");
    n.tcp.rto_initial = t(s, "rnic.tcp.rto_initial");
    n.tcp.rto_min = t(s, "rnic.tcp.rto_min");
    n.tcp.initial_window_segments = u32(s, "rnic.tcp.initial_window");
    n.tcp.max_connections = u32(s, "rnic.tcp.max_connections");
    n.tcp.retransmit_from_host = s.get_string("rnic.tcp.retransmit_from") == "host";
    n.tcp.seed = static_cast<std::uint64_t>(s.get_int("simulation.seed")) * 2 + static_cast<std::uint64_t>(host_index);
    n.framer.clock_hz = clock;
    const std::string path = s.get_string("rnic.rx_path");
    n.framer.path = path == "markers"   ? rx_path::markers
                    : path == "aligned" ? rx_path::aligned
                    : path == "urgent"  ? rx_path::urgent
                                        : rx_path::buffering;
    const std::string framing = s.get_string("rnic.framing");
    n.framing.kind = framing == "ift"       ? framing_kind::ift
                     : framing == "rdmatcp" ? framing_kind::rdmatcp
                     : framing == "vitcp"   ? framing_kind::vitcp
                                            : framing_kind::mpa;
    // Its own stream of values (RDMA/TCP Connection IDs, first message numbers), apart from TCP's.
    n.framing.seed =
        (static_cast<std::uint64_t>(s.get_int("simulation.seed")) * 2 + static_cast<std::uint64_t>(host_index)) ^
        0x5244'4D41'2F54'4350ull;  // "RDMA/TCP"
    n.framing.bytes_per_cycle = u32(s, "rnic.mpa.crc_bytes_per_cycle");
    n.framing.clock_hz = clock;
    n.framer.join_split_fpdus = s.get_bool("rnic.mpa.join_split_fpdus");
    n.framer.cycles_per_fpdu = s.get_number("rnic.mpa.cycles_per_fpdu");
    if (s.get_string("rnic.mpa.model") == "rtl") {
        n.framing.model = datapath_model::rtl;
        if (n.framing.bytes_per_cycle != 8 && n.framing.bytes_per_cycle != 16) {
            throw config::scenario_error(s.origin() +
                                         ": rnic.mpa.crc_bytes_per_cycle: the RTL datapath (rnic.mpa.model "
                                         "rtl) is built 8 or 16 bytes wide, not " +
                                         std::to_string(n.framing.bytes_per_cycle));
        }
        std::string vcd = s.get_string("rnic.mpa.rtl_vcd");
        const std::size_t h = vcd.find("%h");
        if (h != std::string::npos)
            vcd.replace(h, 2, identity_of(s, host_index).name);
        else if (host_index != 0)
            vcd.clear();
        n.framing.rtl_vcd = vcd;
    }
    n.rdma.clock_hz = clock;
    n.rdma.cycles_per_wqe = s.get_number("rnic.rdma.cycles_per_wqe");
    n.rdma.cycles_per_segment = s.get_number("rnic.rdma.cycles_per_segment");
    n.contexts.max_qp = u32(s, "rnic.rdma.max_qp");
    n.contexts.max_cq = u32(s, "rnic.rdma.max_cq");
    n.contexts.max_mr = u32(s, "rnic.rdma.max_mr");
    n.rdma.ird = u32(s, "rnic.rdma.ird");
    n.rdma.ord = u32(s, "rnic.rdma.ord");
    n.rdma.wqe_fetch_depth = u32(s, "rnic.rdma.wqe_fetch_depth");
    // The hostile peer (workload.type = hostile) sends its ULPDUs raw: the test mode is implied.
    n.rdma.raw_ulpdu_wqes = s.get_bool("rnic.rdma.raw_ulpdu_wqes") || s.get_string("workload.type") == "hostile";
    n.rdma.pcie_atomic_ops = s.get_string("rnic.rdma.atomics") == "pcie_atomicop";
    n.contexts.cache.enabled = s.get_bool("rnic.context_cache.enabled");
    n.contexts.cache.entries = u32(s, "rnic.context_cache.entries");
    n.contexts.cache.associativity = u32(s, "rnic.context_cache.associativity");
    n.contexts.cache.replacement = cache_policy::parse(s.get_string("rnic.context_cache.replacement"));
    const auto cache_seed = static_cast<std::uint64_t>(s.get_int("rnic.context_cache.seed"));
    n.contexts.cache.seed = cache_seed != 0 ? cache_seed : static_cast<std::uint64_t>(s.get_int("simulation.seed"));
    n.contexts.cache.stag_entries = u32(s, "rnic.context_cache.stag_entries");
    n.contexts.cache.qp_context_bytes = static_cast<std::uint32_t>(s.get_size("rnic.context_cache.qp_context_bytes"));
    n.contexts.cache.stag_entry_bytes = static_cast<std::uint32_t>(s.get_size("rnic.context_cache.stag_entry_bytes"));
    n.cp.clock_hz = s.get_frequency_hz("rnic.cp.clock");
    p.firmware.command = static_cast<std::uint64_t>(s.get_int("rnic.cp.command_cycles"));
    p.firmware.event = static_cast<std::uint64_t>(s.get_int("rnic.cp.event_cycles"));
    p.firmware.mpa_frame = static_cast<std::uint64_t>(s.get_int("rnic.cp.mpa_frame_cycles"));
    n.cp.mpa.revision = static_cast<int>(s.get_int("rnic.mpa.revision"));
    n.cp.mpa.want_markers = s.get_bool("rnic.mpa.markers");
    n.cp.mpa.want_crc = s.get_bool("rnic.mpa.crc");
    n.cp.mpa.pack_marker_fpdus = s.get_bool("rnic.mpa.pack_fpdus");
    n.cp.mpa.ird = static_cast<std::uint16_t>(s.get_int("rnic.mpa.ird"));
    n.cp.mpa.ord = static_cast<std::uint16_t>(s.get_int("rnic.mpa.ord"));
    n.cp.mpa.timeout_ps = s.get_time_ps("rnic.mpa.timeout");
    n.cp.mpa.max_ird = static_cast<std::uint16_t>(n.rdma.ird);
    n.cp.mpa.max_ord = static_cast<std::uint16_t>(n.rdma.ord);
    n.cp.mpa.peer_to_peer = s.get_bool("rnic.mpa.peer_to_peer");
    // VI/TCP (seed 003): the CE exchange replaces the MPA Request/Reply; this end's proposal.
    n.cp.mpa.vitcp = framing == "vitcp";
    {
        namespace ce = proto::vitcp_ce;
        const std::string own_level = identity_of(s, host_index).vitcp_reliability;
        const std::string level = own_level != "same" ? own_level : s.get_string("rnic.vitcp.reliability");
        ce::proposal& v = n.cp.mpa.vitcp_proposal;
        v.level = level == "unreliable"           ? ce::reliability::unreliable
                  : level == "reliable_reception" ? ce::reliability::reliable_reception
                                                  : ce::reliability::reliable_delivery;
        v.crc = s.get_bool("rnic.vitcp.crc");
        v.urgent_marker = s.get_bool("rnic.vitcp.urgent_marker");
        v.mtu = static_cast<std::uint32_t>(s.get_int("rnic.vitcp.mtu"));
        v.rdma_read_window = static_cast<std::uint16_t>(s.get_int("rnic.vitcp.rdma_read_window"));
        n.cp.mpa.vitcp_raw_connect_requests = s.get_bool("rnic.vitcp.raw_connect_requests");
    }
    const std::string own_rtr = identity_of(s, host_index).mpa_rtr;
    const std::string rtr = own_rtr != "same" ? own_rtr : s.get_string("rnic.mpa.rtr");
    n.cp.mpa.rtr_types = static_cast<std::uint8_t>((rtr.find("write") != std::string::npos ? fw::rtr::kWrite : 0) |
                                                   (rtr.find("read") != std::string::npos ? fw::rtr::kRead : 0));
    return p;
}

fault_config build_faults(const config::scenario& s, const std::string& d) {
    fault_config f;
    f.loss = s.get_number(d + ".loss");
    f.ge_good_to_bad = s.get_number(d + ".burst.good_to_bad");
    f.ge_bad_to_good = s.get_number(d + ".burst.bad_to_good");
    f.ge_loss_good = s.get_number(d + ".burst.loss_good");
    f.ge_loss_bad = s.get_number(d + ".burst.loss_bad");
    f.reorder = s.get_number(d + ".reorder");
    f.reorder_delay_ps = s.get_time_ps(d + ".reorder_delay");
    f.duplicate = s.get_number(d + ".duplicate");
    f.corrupt = s.get_number(d + ".corrupt");
    f.corrupt_fixes_checksum = s.get_bool(d + ".corrupt_fixes_checksum");
    f.resegment = s.get_number(d + ".resegment");
    const std::string trace = s.get_string(d + ".loss_trace");
    std::string error;
    if (!trace.empty() && !load_loss_trace(trace, &f.trace_drops, &error)) {
        // Name the key that gave the file: an unset per-host key reads it from link.*.
        throw config::scenario_error(s.origin() + ": " + s.value_key(d + ".loss_trace") + ": " + error);
    }
    return f;
}

ethernet_link_params build_link_params(const config::scenario& s, const std::string& rate,
                                       const std::string& propagation, const std::string& a_to_b,
                                       const std::string& b_to_a) {
    ethernet_link_params p;
    p.rate_bps = s.get_rate_bps(rate);
    p.propagation = t(s, propagation);
    p.mtu = u32(s, "link.mtu");
    p.a_to_b = build_faults(s, a_to_b);
    p.b_to_a = build_faults(s, b_to_a);
    p.seed = static_cast<std::uint64_t>(s.get_int("simulation.seed"));
    p.order = s.get_string("link.order") == "time" ? booking::backfill : booking::in_order;
    return p;
}

ethernet_link_params build_link_params(const config::scenario& s) {
    return build_link_params(s, "link.rate", "link.propagation", "link.a_to_b", "link.b_to_a");
}

std::string host_link_key(const config::scenario& s, int host_index, const std::string& what) {
    const std::string own = "hosts." + std::to_string(host_index) + ".link";
    if (s.has(own)) return own + "." + what;  // its unset keys read link.* (hosts.<i>.link inherits)
    if (what == "to_switch") return "link.a_to_b";
    if (what == "from_switch") return "link.b_to_a";
    return "link." + what;
}

ethernet_link_params build_host_link_params(const config::scenario& s, int host_index) {
    return build_link_params(s, host_link_key(s, host_index, "rate"), host_link_key(s, host_index, "propagation"),
                             host_link_key(s, host_index, "to_switch"), host_link_key(s, host_index, "from_switch"));
}

namespace {
// workload.sizes, or with workload.all_sizes every power of two from 2 bytes to 8 MiB that fits
// `limit` bytes (perftest -a).
std::vector<std::uint64_t> workload_sizes(const config::scenario& s, std::uint64_t limit) {
    if (!s.get_bool("workload.all_sizes")) return s.get_size_list("workload.sizes");
    std::vector<std::uint64_t> sizes;
    for (std::uint64_t n = 2; n <= (8u << 20) && n <= limit; n *= 2) sizes.push_back(n);
    return sizes;
}
}  // namespace

write_bw_config build_write_bw_config(const config::scenario& s) {
    write_bw_config c;
    c.send = s.get_string("workload.type") == "send_bw";
    c.read = s.get_string("workload.type") == "read_bw";
    c.atomic = s.get_string("workload.type") == "atomic_bw";
    c.inject = s.get_string("workload.inject");
    c.sizes = workload_sizes(s, s.get_size("workload.buffer") /
                                    std::max<std::uint64_t>(1, static_cast<std::uint64_t>(s.get_int("workload.qps"))));
    c.iterations = u32(s, "workload.iterations");
    c.queue_depth = u32(s, "workload.queue_depth");
    c.buffer = s.get_size("workload.buffer");
    c.port = static_cast<std::uint16_t>(s.get_int("workload.port"));
    c.event_mode = s.get_string("workload.completion") == "event";
    c.poll_interval_ps = s.get_time_ps("workload.poll_interval");
    c.seed = static_cast<std::uint64_t>(s.get_int("simulation.seed"));
    c.qps = u32(s, "workload.qps");
    return c;
}

perf_lat_config build_perf_lat_config(const config::scenario& s) {
    perf_lat_config c;
    const std::string type = s.get_string("workload.type");
    c.op = type == "send_lat"     ? perf_lat_config::kind::send
           : type == "read_lat"   ? perf_lat_config::kind::read
           : type == "atomic_lat" ? perf_lat_config::kind::atomic
                                  : perf_lat_config::kind::write;
    c.cmp_swap = s.get_string("workload.lat_atomic") == "cmp_swap";
    c.max_inline = static_cast<std::uint32_t>(s.get_size("workload.lat_inline"));
    c.sizes = workload_sizes(s, s.get_size("workload.buffer") / 2);
    c.iterations = u32(s, "workload.iterations");
    c.buffer = s.get_size("workload.buffer");
    c.port = static_cast<std::uint16_t>(s.get_int("workload.port"));
    c.poll_interval_ps = s.get_time_ps("workload.poll_interval");
    c.seed = static_cast<std::uint64_t>(s.get_int("simulation.seed"));
    return c;
}

probe_config build_probe_config(const config::scenario& s) {
    probe_config c;
    c.probe = s.get_string("workload.probe");
    c.port = static_cast<std::uint16_t>(s.get_int("workload.port"));
    c.poll_interval_ps = s.get_time_ps("workload.poll_interval");
    c.seed = static_cast<std::uint64_t>(s.get_int("simulation.seed"));
    c.mpa_timeout_ps = s.get_time_ps("rnic.mpa.timeout");
    c.framing = s.get_string("rnic.framing");
    c.vi_level = s.get_string("rnic.vitcp.reliability");
    c.vi_crc = s.get_bool("rnic.vitcp.crc");
    c.client_link_corrupts_past_checksum =
        s.get_number("link.a_to_b.corrupt") > 0.0 && s.get_bool("link.a_to_b.corrupt_fixes_checksum");
    c.vi_read_window = static_cast<std::uint16_t>(s.get_int("rnic.vitcp.rdma_read_window"));
    c.raw_wqes = s.get_bool("rnic.rdma.raw_ulpdu_wqes");
    c.vi_raw_connect_requests = s.get_bool("rnic.vitcp.raw_connect_requests");
    // As the TCP engine carves them (first fit, all of one size), and what is left to receive into.
    const std::uint64_t region = s.get_size("rnic.tcp.send_buffer");
    c.client_send_regions = buffer_capacity_of(s, 0) / region;
    c.server_send_regions = buffer_capacity_of(s, 1) / region;
    c.client_receive_room = buffer_capacity_of(s, 0) % region;
    c.server_receive_room = buffer_capacity_of(s, 1) % region;
    c.mss = static_cast<std::uint64_t>(s.get_int("link.mtu")) - 40;
    c.reserved_send_regions = s.get_string("rnic.buffer.send_regions") == "reserved";
    return c;
}

rping_config build_rping_config(const config::scenario& s) {
    rping_config c;
    // With a real peer, the role is host a's program's. With a QEMU guest it is the guest's, and host
    // b runs the other side from its slot (simulation.cpp): its program never switches role.
    c.server_role = s.get_string("workload.rping.role") == "server" && s.get_string("host_bus.transport") != "qemu";
    // A real machine at the far end (behind the socket bridge) or a QEMU guest as host a: either way
    // only host b's side is this program, and no out-of-band hand-shake.
    c.real_peer = s.get_string("peer.kind") == "socket" || s.get_string("host_bus.transport") == "qemu";
    c.count = u32(s, "workload.rping.count");
    c.size = u32(s, "workload.rping.size");
    c.port = static_cast<std::uint16_t>(s.get_int("workload.rping.port"));
    c.validate = s.get_bool("workload.rping.validate");
    c.timeout_ps = s.get_time_ps("workload.rping.timeout");
    c.start_delay_ps = s.get_time_ps("workload.rping.start_delay");
    c.connect_attempts = u32(s, "workload.rping.connect_attempts");
    c.private_data = s.get_string("workload.rping.private_data");
    c.retry_interval_ps = s.get_time_ps("workload.rping.retry_interval");
    return c;
}

hostile_config build_hostile_config(const config::scenario& s) {
    hostile_config c;
    c.mode = s.get_string("workload.hostile.mode");
    c.episodes = static_cast<std::uint64_t>(s.get_int("workload.hostile.episodes"));
    c.max_good = u32(s, "workload.hostile.max_good");
    c.max_payload = static_cast<std::uint32_t>(s.get_size("workload.hostile.max_payload"));
    c.answer_timeout_ps = s.get_time_ps("workload.hostile.answer_timeout");
    const auto seed = static_cast<std::uint64_t>(s.get_int("workload.seed"));
    c.seed = seed != 0 ? seed : static_cast<std::uint64_t>(s.get_int("simulation.seed"));
    c.port = static_cast<std::uint16_t>(s.get_int("workload.port"));
    c.poll_interval_ps = s.get_time_ps("workload.poll_interval");
    c.target_send_buffer = s.get_size("rnic.tcp.send_buffer");
    c.stream = s.get_string("workload.hostile.stream");
    c.crc = s.get_bool("rnic.mpa.crc");
    // EMSS without options (IPv4 and TCP headers, 40 bytes); timestamps only make the real MULPDU smaller.
    c.mulpdu = static_cast<std::uint32_t>(proto::mpa::max_ulpdu(u32(s, "link.mtu") - 40, false));
    if (c.mode == "grammar" && c.stream == "peer" &&
        (s.get_string("rnic.framing") != "mpa" || s.get_bool("rnic.mpa.markers"))) {
        throw config::scenario_error(s.origin() +
                                     ": workload.hostile.stream: peer framing needs rnic.framing = mpa "
                                     "without markers (set workload.hostile.stream to nic)");
    }
    return c;
}

perf_server_config build_perf_server_config(const config::scenario& s) {
    perf_server_config c;
    c.port = static_cast<std::uint16_t>(s.get_int("workload.perf_server.port"));
    c.buffer = static_cast<std::uint64_t>(s.get_size("workload.perf_server.buffer"));
    c.max_send = static_cast<std::uint32_t>(s.get_size("workload.perf_server.max_send"));
    c.receives = u32(s, "workload.perf_server.receives");
    c.timeout_ps = s.get_time_ps("workload.perf_server.timeout");
    return c;
}

trace_config build_trace_config(const config::scenario& s) {
    trace_config c;
    std::string error;
    if (!load_op_trace(s.get_string("workload.trace"), s.get_size("workload.buffer"), &c, &error)) {
        throw config::scenario_error(s.origin() + ": workload.trace: " + error);
    }
    c.buffer = s.get_size("workload.buffer");
    c.queue_depth = u32(s, "workload.queue_depth");
    c.port = static_cast<std::uint16_t>(s.get_int("workload.port"));
    c.poll_interval_ps = s.get_time_ps("workload.poll_interval");
    const auto seed = static_cast<std::uint64_t>(s.get_int("workload.seed"));
    c.seed = seed != 0 ? seed : static_cast<std::uint64_t>(s.get_int("simulation.seed"));
    c.flip_byte = s.get_string("workload.inject") == "flip_byte";
    return c;
}

examples::kv_example_config build_kv_example_config(const config::scenario& s) {
    examples::kv_example_config c;
    c.clients = u32(s, "workload.qps");
    c.updates = u32(s, "workload.iterations");
    c.port = static_cast<std::uint16_t>(s.get_int("workload.port"));
    c.poll_interval_ps = s.get_time_ps("workload.poll_interval");
    c.seed = static_cast<std::uint64_t>(s.get_int("simulation.seed"));
    c.skip_lock = s.get_string("workload.inject") == "skip_lock";
    return c;
}

examples::vipl_example_config build_vipl_example_config(const config::scenario& s) {
    examples::vipl_example_config c;
    c.rounds = u32(s, "workload.iterations");
    c.sizes = s.get_size_list("workload.sizes");
    if (c.sizes.empty()) c.sizes.push_back(64);
    c.port = static_cast<std::uint16_t>(s.get_int("workload.port"));
    return c;
}

mixed_config build_mixed_config(const config::scenario& s) {
    mixed_config c;
    c.qps = u32(s, "workload.qps");
    c.operations = u32(s, "workload.iterations");
    c.queue_depth = u32(s, "workload.queue_depth");
    c.buffer = s.get_size("workload.buffer");
    c.port = static_cast<std::uint16_t>(s.get_int("workload.port"));
    c.event_mode = s.get_string("workload.completion") == "event";
    c.poll_interval_ps = s.get_time_ps("workload.poll_interval");
    const auto seed = static_cast<std::uint64_t>(s.get_int("workload.seed"));
    c.seed = seed != 0 ? seed : static_cast<std::uint64_t>(s.get_int("simulation.seed"));
    c.min_size = static_cast<std::uint32_t>(s.get_size("workload.mixed.min_size"));
    c.max_size = static_cast<std::uint32_t>(s.get_size("workload.mixed.max_size"));
    c.receives = u32(s, "workload.mixed.receives");
    c.counters = u32(s, "workload.mixed.counters");
    c.spare_stags = u32(s, "workload.mixed.spare_stags");
    c.accept_gap_ps = s.get_time_ps("workload.mixed.accept_gap");
    c.flip_byte = s.get_string("workload.inject") == "flip_byte";
    return c;
}

namespace {
idle_wait idle_wait_of(const config::scenario& s) {
    return s.get_string("workload.idle_poll") == "sleep" ? idle_wait::until_completion : idle_wait::every_pass;
}
}  // namespace

incast_config build_incast_config(const config::scenario& s) {
    incast_config c;
    const int hosts = host_count(s);
    c.receiver = static_cast<int>(s.get_int("workload.incast.receiver"));
    int senders = static_cast<int>(s.get_int("workload.incast.senders"));
    if (senders == 0) senders = hosts - 1;
    for (int h = 0; h < hosts && static_cast<int>(c.senders.size()) < senders; ++h) {
        if (h != c.receiver) c.senders.push_back(h);
    }
    c.qps = u32(s, "workload.qps");
    c.size = s.get_size("workload.incast.size");
    c.rounds = u32(s, "workload.incast.rounds");
    c.senders_sleep = s.get_string("workload.incast.sender_wait") == "event";
    c.jitter_ps = s.get_time_ps("workload.incast.jitter");
    c.idle = idle_wait_of(s);
    c.port = static_cast<std::uint16_t>(s.get_int("workload.port"));
    c.poll_interval_ps = s.get_time_ps("workload.poll_interval");
    c.seed = static_cast<std::uint64_t>(s.get_int("simulation.seed"));
    return c;
}

traffic_matrix_config build_traffic_matrix_config(const config::scenario& s) {
    traffic_matrix_config c;
    c.all_to_all = s.get_string("workload.type") == "all_to_all";
    c.hosts = host_count(s);
    c.size = s.get_size("workload.matrix.size");
    c.messages = u32(s, "workload.matrix.messages");
    c.jitter_ps = s.get_time_ps("workload.matrix.jitter");
    c.idle = idle_wait_of(s);
    c.queue_depth = u32(s, "workload.queue_depth");
    c.port = static_cast<std::uint16_t>(s.get_int("workload.port"));
    c.poll_interval_ps = s.get_time_ps("workload.poll_interval");
    c.seed = static_cast<std::uint64_t>(s.get_int("simulation.seed"));
    return c;
}

drv::station_config build_station(const config::scenario& s, int host_index) {
    const host_identity id = identity_of(s, host_index);
    drv::station_config st;
    parse_mac(id.mac, &st.mac);  // validated by the schema's checks
    st.ipv4 = *proto::net::parse_ipv4(id.ipv4);
    return st;
}

}  // namespace rnic::platform
