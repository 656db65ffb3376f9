#include "simulation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <stdexcept>

#include "build_params.h"
#include "host_identity.h"
#include "schema_parts.h"
#include "core/log.h"
#include "core/sim_log.h"
#include "workloads/workload_math.h"

namespace rnic::platform {

namespace {

bool is_latency_type(const std::string& type) {
    return type == "write_lat" || type == "send_lat" || type == "read_lat" || type == "atomic_lat";
}

double mean(const std::vector<std::uint64_t>& v) {
    if (v.empty()) return 0.0;
    long double sum = 0;
    for (std::uint64_t x : v) sum += x;
    return static_cast<double>(sum / static_cast<long double>(v.size()));
}

socket_bridge_params build_peer_params(const config::scenario& s) {
    socket_bridge_params p;
    p.address = s.get_string("peer.address");
    p.port = static_cast<std::uint16_t>(s.get_int("peer.port"));
    p.listen = s.get_bool("peer.listen");
    p.open_timeout = std::chrono::milliseconds(s.get_time_ps("peer.open_timeout") / 1000'000'000ULL);
    p.realtime = s.get_bool("peer.realtime");
    p.realtime_slack = from_ps(s.get_time_ps("peer.realtime_slack"));
    p.poll_interval = from_ps(s.get_time_ps("peer.poll_interval"));
    p.mtu = static_cast<std::uint32_t>(s.get_int("link.mtu"));
    return p;
}

boost::json::object report_of(const stats_reporter& r) {
    boost::json::object o;
    r.report_stats(o);
    return o;
}

}  // namespace

simulation::simulation(const config::scenario& scenario, const std::string& pcap_path) : scenario_(scenario) {
    // Times are converted to and from picoseconds by value (core/sim_time.h).
    if (!kernel_resolution_is_1ps()) throw std::logic_error("the SystemC time resolution must be 1 ps");
    const int n = host_count(scenario);
    for (int i = 0; i < n; ++i) {
        const std::string name = identity_of(scenario, i).name;
        hosts_.push_back(std::make_unique<host_system>(name.c_str(), build_host_params(scenario, i)));
    }
    std::vector<drv::station_config> st;
    for (int i = 0; i < n; ++i) st.push_back(build_station(scenario, i));
    const bool real_peer = scenario.get_string("peer.kind") == "socket";
    if (scenario.get_string("topology.kind") == "back_to_back") {
        link_ = std::make_unique<ethernet_link>("link", build_link_params(scenario));
        hosts_[0]->nic.eth_tx.bind(link_->port_a_in);
        link_->port_a_out.bind(hosts_[0]->nic.eth_rx);
        if (real_peer) {
            // Host b is a real machine behind the socket bridge (hosts.1.ipv4 is its address); the
            // simulated host b stays off the wire and runs no program.
            peer_ = std::make_unique<socket_bridge>("peer", build_peer_params(scenario));
            peer_->eth_tx.bind(link_->port_b_in);
            link_->port_b_out.bind(peer_->eth_rx);
            unplugged_ = std::make_unique<unplugged_port>("unplugged");
            hosts_[1]->nic.eth_tx.bind(unplugged_->eth_rx);
            unplugged_->eth_tx.bind(hosts_[1]->nic.eth_rx);
        } else {
            hosts_[1]->nic.eth_tx.bind(link_->port_b_in);
            link_->port_b_out.bind(hosts_[1]->nic.eth_rx);
        }
        // Static neighbour entries between simulated hosts; a real peer is resolved by ARP.
        if (!real_peer) {
            hosts_[0]->nic.toe().add_neighbour(st[1].ipv4, st[1].mac);
            hosts_[1]->nic.toe().add_neighbour(st[0].ipv4, st[0].mac);
        }
        if (!pcap_path.empty()) {
            std::string error;
            if (!pcap_.open(pcap_path, &error)) throw std::runtime_error(error);
            link_->set_pcap(&pcap_);
        }
    } else {
        std::vector<host_system*> members;
        for (auto& h : hosts_) members.push_back(h.get());
        fabric_ = std::make_unique<fabric>(scenario, members, st, pcap_path);
        // Every host knows every other host's MAC, as the two back-to-back hosts do.
        for (int i = 0; i < n; ++i) {
            for (int j = 0; j < n; ++j) {
                if (i != j)
                    hosts_[static_cast<std::size_t>(i)]->nic.toe().add_neighbour(st[static_cast<std::size_t>(j)].ipv4,
                                                                                 st[static_cast<std::size_t>(j)].mac);
            }
        }
    }
    if (peer_) {
        std::string error;
        if (!peer_->open(&error)) throw std::runtime_error(error);
    }
    const bool qemu_guest = scenario.get_string("host_bus.transport") == "qemu";
    if (qemu_guest) {
        std::string error;
        const int fd = qemu::open_proxy_socket(
            static_cast<int>(scenario.get_int("qemu.fd")), scenario.get_string("qemu.listen"),
            static_cast<int>(scenario.get_time_ps("qemu.open_timeout") / 1000'000'000ULL), &error);
        if (fd < 0) throw std::runtime_error(error);
        qemu::qemu_remote_params qp;
        qp.fd = fd;
        qp.realtime = scenario.get_bool("qemu.realtime");
        qp.realtime_slack_ps = scenario.get_time_ps("qemu.realtime_slack");
        qp.poll_interval_ps = scenario.get_time_ps("qemu.poll_interval");
        guest_ram_ = std::make_unique<qemu::guest_ram>();
        hosts_[0]->mem.attach_guest(guest_ram_.get());
        qemu_ = std::make_unique<qemu::qemu_remote>(std::string(hosts_[0]->name()) + ".qemu", qp, *guest_ram_);
        hosts_[0]->cpu.set_program([this](drv::host_bus& bus) {
            qemu_error_ = qemu_->run(bus);
            // The guest is gone (QEMU exited or the stream failed): nothing more can happen on host a.
            sc_core::sc_stop();
        });
    }

    // With a QEMU guest as host a the run ends when QEMU goes away (the guest tears its side down
    // after host b's program is done), not when the workload is.
    const bool stop_when_done = scenario.get_string("host_bus.transport") != "qemu";
    auto on_done = [this, stop_when_done] {
        done_ = true;
        if (stop_when_done) sc_core::sc_stop();
    };
    const std::string type = scenario.get_string("workload.type");
    std::vector<std::string> names;
    for (auto& h : hosts_) names.push_back(h->name());
    auto host_peek_fn = [this](int host, std::uint64_t addr, void* dst, std::size_t len) {
        return hosts_[static_cast<std::size_t>(host)]->mem.peek(addr, dst, len);
    };
    if (type == "incast") {
        workload_ = std::make_unique<incast>(build_incast_config(scenario), names, oob_, host_peek_fn, on_done);
    } else if (type == "all_to_all" || type == "permutation") {
        workload_ =
            std::make_unique<traffic_matrix>(build_traffic_matrix_config(scenario), names, oob_, host_peek_fn, on_done);
    } else {
        auto client = static_cast<std::size_t>(scenario.get_int("workload.client"));
        auto server = static_cast<std::size_t>(scenario.get_int("workload.server"));
        if (qemu_guest && type == "rping" && scenario.get_string("workload.rping.role") == "server") {
            // The guest (host a) is the rping server: host b's program is the client, against host a.
            std::swap(client, server);
        }
        host_memory& src_mem = hosts_[client]->mem;
        host_memory& dst_mem = hosts_[server]->mem;
        auto check = [&src_mem, &dst_mem](bool from_client, std::uint64_t src, std::uint64_t dst, std::uint64_t len) {
            host_memory& from = from_client ? src_mem : dst_mem;
            host_memory& to = from_client ? dst_mem : src_mem;
            return compare_ranges([&from](std::uint64_t a, void* d, std::size_t k) { return from.peek(a, d, k); }, src,
                                  [&to](std::uint64_t a, void* d, std::size_t k) { return to.peek(a, d, k); }, dst,
                                  len);
        };
        std::unique_ptr<host_workload> wl;
        if (type == "mixed") {
            auto peek = [&src_mem, &dst_mem](int host, std::uint64_t addr, void* dst, std::size_t len) {
                return (host == 0 ? src_mem : dst_mem).peek(addr, dst, len);
            };
            wl = std::make_unique<mixed>(build_mixed_config(scenario), oob_, peek, on_done);
        } else if (type == "rping") {
            wl = std::make_unique<rping>(build_rping_config(scenario), oob_, on_done);
        } else if (type == "perf_server") {
            wl = std::make_unique<perf_server>(build_perf_server_config(scenario), on_done);
        } else if (type == "trace") {
            wl = std::make_unique<trace_replay>(build_trace_config(scenario), oob_, on_done);
        } else if (type == "hostile") {
            wl = std::make_unique<hostile>(
                build_hostile_config(scenario), oob_,
                [&src_mem](std::uint64_t addr, void* dst, std::size_t len) { return src_mem.peek(addr, dst, len); },
                [&src_mem](host_memory::write_observer f) { src_mem.observe_device_writes(std::move(f)); }, on_done);
        } else if (type == "probe") {
            wl = std::make_unique<probe>(build_probe_config(scenario), oob_, on_done);
        } else if (is_latency_type(type)) {
            wl = std::make_unique<perf_lat>(build_perf_lat_config(scenario), oob_, on_done);
        } else if (type == "kv_example") {
            wl = std::make_unique<examples::kv_example>(build_kv_example_config(scenario), oob_, on_done);
        } else if (type == "vipl_example") {
            wl = std::make_unique<examples::vipl_example>(build_vipl_example_config(scenario), oob_, on_done);
        } else {
            wl = std::make_unique<write_bw>(build_write_bw_config(scenario), oob_, check, on_done);
        }
        two_host_ = wl.get();
        workload_ = std::make_unique<two_host_workload>(std::move(wl), static_cast<int>(client),
                                                        static_cast<int>(server), st[server].ipv4);
    }
    fabric_workload* wl = workload_.get();
    // A real peer or guest runs on wall time: its silences are not the model's.
    if (!real_peer && !qemu_guest) watchdog_interval_ps_ = scenario.get_time_ps("simulation.watchdog");
    for (int i = 0; i < n; ++i) {
        if (!wl->has_program(i) || (real_peer && i == 1) || (qemu_guest && i == 0)) continue;
        hosts_[static_cast<std::size_t>(i)]->cpu.set_program(
            [wl, i, sti = st[static_cast<std::size_t>(i)]](drv::host_bus& bus) { wl->program(i, bus, sti); });
    }
}

simulation::~simulation() = default;

void simulation::record_stuck(std::uint64_t last_progress_ps) {
    stuck_dump_["stopped_at_ps"] = to_ps(sc_core::sc_time_stamp());
    stuck_dump_["last_progress_ps"] = last_progress_ps;
    boost::json::object hosts;
    std::cerr << "watchdog: no progress since " << last_progress_ps / 1'000'000 << " us, stopped at "
              << to_ps(sc_core::sc_time_stamp()) / 1'000'000 << " us\n";
    for (const auto& h : hosts_) {
        boost::json::object d;
        h->nic.report_diagnostics(d);
        std::cerr << "  host " << h->name() << ": buffer occupancy " << d["buffer_occupancy_bytes"]
                  << " bytes, firmware commands " << d["firmware_commands_executed"] << "\n";
        for (const auto& q : d["qps"].as_array()) std::cerr << "    QP " << boost::json::serialize(q) << "\n";
        for (const auto& c : d["tcp_connections"].as_array())
            std::cerr << "    TCP " << boost::json::serialize(c) << "\n";
        hosts[h->name()] = std::move(d);
    }
    stuck_dump_["hosts"] = std::move(hosts);
}

std::uint64_t simulation::progress() const {
    std::uint64_t sum = 0;
    for (const auto& h : hosts_) sum += h->nic.progress();
    return sum;
}

bool simulation::run() {
    tlm::tlm_global_quantum::instance().set(from_ps(scenario_.get_time_ps("simulation.quantum")));
    const sc_core::sc_time limit = from_ps(scenario_.get_time_ps("simulation.time_limit"));
    if (watchdog_interval_ps_ == 0) {
        sc_core::sc_start(limit);
    } else {
        // In slices of the watchdog interval, looking at the progress between them.
        const sc_core::sc_time slice = from_ps(watchdog_interval_ps_);
        stall_detector watchdog;
        watchdog.look(progress(), 0, true);
        while (sc_core::sc_get_status() != sc_core::SC_STOPPED && sc_core::sc_time_stamp() < limit) {
            sc_core::sc_start(std::min(slice, limit - sc_core::sc_time_stamp()));
            if (sc_core::sc_get_status() == sc_core::SC_STOPPED) break;
            if (watchdog.look(progress(), to_ps(sc_core::sc_time_stamp()), !done_)) {
                stuck_ = true;
                record_stuck(watchdog.last_progress_ps());
                break;
            }
        }
    }
    pcap_.close();
    const write_bw_result& r = workload_->result();
    bool ok = done_ && r.finished;
    for (const write_bw_row& row : r.rows) ok = ok && row.integrity.ok;
    return ok;
}

double simulation::simulated_seconds() const {
    return sc_core::sc_time_stamp().to_seconds();
}

std::uint64_t simulation::payload_bytes() const {
    std::uint64_t total = 0;
    for (const write_bw_row& row : workload_->result().rows) total += row.bytes;
    return total;
}

std::uint64_t simulation::fpdus() const {
    std::uint64_t total = 0;
    for (const auto& h : hosts_) {
        boost::json::object o = report_of(h->nic);
        total += o["framer"].as_object()["tx_fpdus"].to_number<std::uint64_t>();
    }
    return total;
}

boost::json::object simulation::results() const {
    const write_bw_result& r = workload_->result();
    boost::json::object out;
    out["scenario"] = scenario_.as_run();
    out["seed"] = scenario_.get_int("simulation.seed");
    out["simulated_time_ps"] = to_ps(sc_core::sc_time_stamp());
    std::string status = "ok";
    if (!r.error.empty())
        status = "failed";
    else if (qemu_ && !done_)
        status = "incomplete: QEMU closed the connection before the workload finished";
    else if (stuck_) {
        status = "stuck: no work request, completion, frame or firmware command for " +
                 std::to_string(watchdog_interval_ps_ / 1'000'000) +
                 " us while the workload was not done (simulation.watchdog)";
    } else if (!done_ || !r.finished)
        status = "incomplete: time limit reached";

    boost::json::object wl;
    const std::string type = scenario_.get_string("workload.type");
    wl["type"] = type;
    wl["connect_latency_ns"] = static_cast<double>(r.connect_ps) / 1000.0;
    if (!r.error.empty()) wl["error"] = r.error;
    boost::json::array rows;
    std::uint64_t writes = 0, bytes = 0, checked = 0, mismatched = 0;
    bool integrity_ok = !r.rows.empty();
    for (const write_bw_row& row : r.rows) {
        const double secs = static_cast<double>(row.elapsed_ps) * 1e-12;
        boost::json::object o;
        if (!row.op.empty()) o["op"] = row.op;
        o["size"] = row.size;
        o["iterations"] = row.iterations;
        o["bytes"] = row.bytes;
        o["elapsed_ns"] = static_cast<double>(row.elapsed_ps) / 1000.0;
        o["goodput_gbps"] = secs > 0 ? static_cast<double>(row.bytes) * 8 / secs / 1e9 : 0.0;
        o["bandwidth_mbytes_per_s"] = secs > 0 ? static_cast<double>(row.bytes) / secs / 1e6 : 0.0;
        o["message_rate_mpps"] = secs > 0 ? static_cast<double>(row.iterations) / secs / 1e6 : 0.0;
        boost::json::object lat;
        lat["min"] =
            row.latencies_ps.empty()
                ? 0.0
                : static_cast<double>(*std::min_element(row.latencies_ps.begin(), row.latencies_ps.end())) / 1000.0;
        lat["avg"] = mean(row.latencies_ps) / 1000.0;
        lat["p50"] = percentile_ps(row.latencies_ps, 50) / 1000.0;
        lat["p99"] = percentile_ps(row.latencies_ps, 99) / 1000.0;
        lat["p999"] = percentile_ps(row.latencies_ps, 99.9) / 1000.0;
        lat["max"] = percentile_ps(row.latencies_ps, 100) / 1000.0;
        o["latency_ns"] = std::move(lat);
        o["errors"] = row.errors;
        o["integrity_ok"] = row.integrity.ok;
        if (!row.integrity.ok) o["integrity_detail"] = row.integrity.detail;
        rows.push_back(std::move(o));
        writes += row.iterations;
        bytes += row.bytes;
        checked += row.integrity.bytes_checked;
        mismatched += row.integrity.bytes_mismatched;
        integrity_ok = integrity_ok && row.integrity.ok;
    }
    wl["rows"] = std::move(rows);
    // Workloads that keep a per-operation log (trace: tools/rnic-trace-from-results reads it).
    if (const auto* tr = dynamic_cast<const trace_replay*>(two_host_)) wl["operation_log"] = tr->operation_log();
    out["workload"] = std::move(wl);
    if (const auto* h = dynamic_cast<const hostile*>(two_host_)) out["hostile"] = h->report();
    const char* op = type == "incast"                                ? "incast_flow"
                     : type == "all_to_all" || type == "permutation" ? "flow"
                     : type == "send_bw"                             ? "send"
                     : type == "read_bw"                             ? "rdma_read"
                     : type == "atomic_bw"                           ? "atomic_fetch_add"
                                                                     : "rdma_write";
    if (type == "mixed" || type == "rping" || type == "kv_example" || type == "vipl_example" || type == "trace" ||
        type == "perf_server" || type == "hostile") {
        // One entry per kind of operation (the rows carry their kind).
        boost::json::object ops;
        for (const write_bw_row& row : r.rows) ops[row.op] = {{"count", row.iterations}, {"bytes", row.bytes}};
        out["operations"] = std::move(ops);
    } else {
        out["operations"] = {{op, {{"count", writes}, {"bytes", bytes}}}};
    }
    out["integrity"] = {{"ok", integrity_ok}, {"bytes_checked", checked}, {"bytes_mismatched", mismatched}};
    if (!integrity_ok && status == "ok") status = "integrity check failed";
    out["status"] = status;
    if (!stuck_dump_.empty()) out["watchdog"] = stuck_dump_;

    boost::json::object modules;
    for (const auto& h : hosts_) {
        const std::string n = h->name();
        modules[n + ".mem"] = report_of(h->mem);
        modules[n + ".pcie"] = report_of(h->pcie);
        modules[n + ".rnic"] = report_of(h->nic);
        modules[n + ".cpu"] = {{"mmio_errors", h->cpu.mmio_errors()}};
    }
    report_host_side_settings(modules);
    if (link_) modules["link"] = report_of(*link_);
    if (fabric_) fabric_->report(modules);
    if (peer_) modules["peer"] = report_of(*peer_);
    if (qemu_) {
        const qemu::qemu_remote_stats& q = qemu_->stats();
        modules[std::string(hosts_[0]->name()) + ".qemu"] = {{"messages", q.messages},
                                                             {"config_reads", q.config_reads},
                                                             {"config_writes", q.config_writes},
                                                             {"bar_reads", q.bar_reads},
                                                             {"bar_writes", q.bar_writes},
                                                             {"ram_syncs", q.syncs},
                                                             {"ram_sync_errors", q.sync_errors},
                                                             {"device_resets", q.resets},
                                                             {"irqfds", q.irqfds},
                                                             {"unknown_messages", q.unknown},
                                                             {"bad_messages", q.bad_messages},
                                                             {"refused_accesses", q.refused_accesses},
                                                             {"undecoded_accesses", q.undecoded_accesses},
                                                             {"bus_master", qemu_->bus_master()},
                                                             {"error", qemu_error_}};
    }
    out["modules"] = std::move(modules);
    if (scenario_.get_bool("simulation.live_objects")) {
        // Only when asked: a new section, so that results without the key stay as they were.
        boost::json::object live;
        for (const auto& h : hosts_) {
            boost::json::object o;
            h->nic.report_live_objects(o);
            live[std::string(h->name()) + ".rnic"] = std::move(o);
        }
        out["live_objects"] = std::move(live);
    }
    if (boost::json::object f = workload_->fabric_results(); !f.empty()) out["fabric_workload"] = std::move(f);
    if (fabric_) out["topology"] = fabric_->describe();
    out["log"] = {{"errors", log::errors_logged()}, {"warnings", log::warnings_logged()}};
    return out;
}

void simulation::report_host_side_settings(boost::json::object& modules) const {
    // Only where some host has keys of its own: otherwise every host runs the global keys the
    // echoed scenario shows, and the results stay as they were before per-host keys existed.
    bool own = false;
    for (std::size_t i = 0; i < scenario_.array_size("hosts"); ++i)
        own = own || !host_bus_key_set(scenario_, i).empty();
    if (!own) return;
    for (std::size_t i = 0; i < hosts_.size(); ++i) {
        const int host = static_cast<int>(i);
        const std::string name = hosts_[i]->name();
        const std::string kind = scenario_.get_string(host_setting_key(scenario_, host, "host_bus.kind"));
        boost::json::object bus{{"kind", kind}};
        for (const auto& kv : host_side_settings(scenario_, host, kind)) bus[kv.key()] = kv.value();
        modules[name + ".pcie"].as_object()["settings"] = std::move(bus);
        modules[name + ".mem"].as_object()["settings"] = host_side_settings(scenario_, host, "host_memory");
    }
}

boost::json::object simulation::qemu_wallclock() const {
    boost::json::object o;
    if (!qemu_) return o;
    const qemu::qemu_remote_stats& q = qemu_->stats();
    const std::uint64_t n = q.bar_reads + q.bar_writes;
    o["bar_accesses"] = n;
    o["bar_wall_us_mean"] = n == 0 ? 0.0 : static_cast<double>(q.bar_wall.count()) / 1e3 / static_cast<double>(n);
    return o;
}

void simulation::print_summary(std::ostream& os) const {
    const write_bw_result& r = workload_->result();
    char line[256];
    const std::string type = scenario_.get_string("workload.type");
    if (is_latency_type(type)) {
        print_latency_summary(os);
        return;
    }
    if (type == "incast") {
        print_incast_summary(os);
        return;
    }
    if (type == "all_to_all" || type == "permutation") {
        print_matrix_summary(os);
        return;
    }
    os << (type == "send_bw"        ? "Send"
           : type == "read_bw"      ? "RDMA Read"
           : type == "atomic_bw"    ? "Atomic FetchAdd"
           : type == "mixed"        ? "Mixed operations"
           : type == "rping"        ? "rping"
           : type == "perf_server"  ? "perf_server (host b) for a client outside the simulation"
           : type == "kv_example"   ? "Key-value store example (platform/workloads/kv_example.cpp)"
           : type == "vipl_example" ? "VIPL example (platform/workloads/vipl_example.cpp)"
           : type == "trace"        ? "Trace replay of " + scenario_.get_string("workload.trace")
                                    : std::string("RDMA Write"))
       << (type == "mixed" || type == "kv_example" ? " on " + std::to_string(scenario_.get_int("workload.qps")) + " QPs"
           : type == "rping"
               ? " (librdmacm rping exchange, " + std::to_string(scenario_.get_int("workload.rping.count")) +
                     " pings of " + std::to_string(scenario_.get_int("workload.rping.size")) + " bytes)"
           : type == "trace" ? std::string()
                             : " bandwidth/latency")
       << " (" << scenario_.get_string("name") << ", seed " << scenario_.get_int("simulation.seed") << ", queue depth "
       << scenario_.get_int("workload.queue_depth") << ")\n";
    std::snprintf(line, sizeof line, "connection set-up: %.2f us\n", static_cast<double>(r.connect_ps) / 1e6);
    os << line;
    os << "------------------------------------------------------------------------------------------------\n";
    os << (type == "mixed" || type == "rping" || type == "kv_example" || type == "vipl_example" || type == "trace" ||
                   type == "perf_server"
               ? " operation            #ops          "
               : " #bytes   #iterations   ")
       << "BW[Gb/s]   BW[MB/s]   MsgRate[Mpps]   t_avg[us]   t_p50[us]   t_p99[us]   data\n";
    for (const write_bw_row& row : r.rows) {
        const double secs = static_cast<double>(row.elapsed_ps) * 1e-12;
        const double gbps = secs > 0 ? static_cast<double>(row.bytes) * 8 / secs / 1e9 : 0.0;
        // Mixed rows are one per kind of operation: the kind stands where the size would.
        const std::string first = row.op.empty() ? std::to_string(row.size) : row.op;
        std::snprintf(line, sizeof line, " %-*s %-13llu %-10.2f %-10.1f %-15.3f %-11.3f %-11.3f %-11.3f %s\n",
                      row.op.empty() ? 8 : 20, first.c_str(), static_cast<unsigned long long>(row.iterations), gbps,
                      secs > 0 ? static_cast<double>(row.bytes) / secs / 1e6 : 0.0,
                      secs > 0 ? static_cast<double>(row.iterations) / secs / 1e6 : 0.0, mean(row.latencies_ps) / 1e6,
                      percentile_ps(row.latencies_ps, 50) / 1e6, percentile_ps(row.latencies_ps, 99) / 1e6,
                      row.integrity.ok ? "ok" : "CORRUPT");
        os << line;
    }
    os << "------------------------------------------------------------------------------------------------\n";
    for (const write_bw_row& row : r.rows) {
        if (!row.integrity.ok && !row.integrity.detail.empty()) {
            os << "integrity (" << (row.op.empty() ? std::to_string(row.size) : row.op) << "): " << row.integrity.detail
               << "\n";
        }
    }
    if (!r.error.empty()) os << "workload error: " << r.error << "\n";
}

void simulation::print_latency_summary(std::ostream& os) const {
    // perftest's latency table: one row per size, times in microseconds.
    const write_bw_result& r = workload_->result();
    const std::string type = scenario_.get_string("workload.type");
    char line[256];
    os << type << " (" << scenario_.get_string("name") << ", seed " << scenario_.get_int("simulation.seed")
       << (type == "write_lat" || type == "send_lat" ? ", ping-pong: half the round trip" : ", post to completion")
       << ")\n";
    std::snprintf(line, sizeof line, "connection set-up: %.2f us\n", static_cast<double>(r.connect_ps) / 1e6);
    os << line;
    os << "------------------------------------------------------------------------------------------------------------"
          "---------------\n";
    os << " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   "
          "99% percentile[usec]   99.9% percentile[usec]   data\n";
    for (const write_bw_row& row : r.rows) {
        const double avg = mean(row.latencies_ps);
        double var = 0;
        for (std::uint64_t x : row.latencies_ps) var += (static_cast<double>(x) - avg) * (static_cast<double>(x) - avg);
        const double stdev =
            row.latencies_ps.empty() ? 0.0 : std::sqrt(var / static_cast<double>(row.latencies_ps.size()));
        std::snprintf(line, sizeof line, " %-6llu %-11llu %-14.2f %-14.2f %-16.2f %-14.2f %-15.2f %-22.2f %-24.2f %s\n",
                      static_cast<unsigned long long>(row.size),
                      static_cast<unsigned long long>(row.latencies_ps.size()),
                      percentile_ps(row.latencies_ps, 0.0001) / 1e6, percentile_ps(row.latencies_ps, 100) / 1e6,
                      percentile_ps(row.latencies_ps, 50) / 1e6, avg / 1e6, stdev / 1e6,
                      percentile_ps(row.latencies_ps, 99) / 1e6, percentile_ps(row.latencies_ps, 99.9) / 1e6,
                      row.integrity.ok ? "ok" : "CORRUPT");
        os << line;
    }
    os << "------------------------------------------------------------------------------------------------------------"
          "---------------\n";
    if (!r.error.empty()) os << "workload error: " << r.error << "\n";
}

}  // namespace rnic::platform

namespace rnic::platform {

void simulation::print_incast_summary(std::ostream& os) const {
    const workload_result& r = workload_->result();
    const boost::json::object f = workload_->fabric_results();
    char line[256];
    os << "Incast (" << scenario_.get_string("name") << ", seed " << scenario_.get_int("simulation.seed") << ", "
       << scenario_.get_string("topology.kind") << " of " << hosts_.size()
       << " hosts): " << f.at("senders").to_number<std::uint64_t>() << " senders x "
       << f.at("qps_per_sender").to_number<std::uint64_t>() << " QPs -> " << f.at("receiver").as_string().c_str()
       << ", " << f.at("bytes_per_sender_per_round").to_number<std::uint64_t>() << " bytes per sender per round\n";
    const boost::json::object& rc = f.at("round_completion").as_object();
    const boost::json::object& fc = f.at("flow_completion").as_object();
    std::snprintf(line, sizeof line, "rounds: %zu   round completion [us]: mean %.3f  p50 %.3f  p99 %.3f  max %.3f\n",
                  f.at("round_completion_ns").as_array().size(), rc.at("mean").to_number<double>() / 1e3,
                  rc.at("p50").to_number<double>() / 1e3, rc.at("p99").to_number<double>() / 1e3,
                  rc.at("max").to_number<double>() / 1e3);
    os << line;
    std::snprintf(line, sizeof line, "flows: %llu    flow completion [us]:  mean %.3f  p50 %.3f  p99 %.3f  max %.3f\n",
                  r.rows.empty() ? 0ULL : static_cast<unsigned long long>(r.rows[0].iterations),
                  fc.at("mean").to_number<double>() / 1e3, fc.at("p50").to_number<double>() / 1e3,
                  fc.at("p99").to_number<double>() / 1e3, fc.at("max").to_number<double>() / 1e3);
    os << line;
    print_goodput_rows(os, "receiver goodput", r);
}

}  // namespace rnic::platform

namespace rnic::platform {

void simulation::print_matrix_summary(std::ostream& os) const {
    const workload_result& r = workload_->result();
    const boost::json::object f = workload_->fabric_results();
    char line[256];
    os << f.at("pattern").as_string().c_str() << " (" << scenario_.get_string("name") << ", seed "
       << scenario_.get_int("simulation.seed") << ", " << scenario_.get_string("topology.kind") << " of "
       << hosts_.size() << " hosts): " << f.at("flows").to_number<std::uint64_t>() << " flows of "
       << f.at("bytes_per_flow").to_number<std::uint64_t>() << " bytes\n";
    const boost::json::object& fc = f.at("flow_completion").as_object();
    const boost::json::object& g = f.at("flow_goodput_gbps").as_object();
    std::snprintf(
        line, sizeof line,
        "flow completion [us]: p50 %.3f  p99 %.3f  max %.3f   flow goodput [Gb/s]: min %.2f  mean %.2f  max %.2f\n",
        fc.at("p50").to_number<double>() / 1e3, fc.at("p99").to_number<double>() / 1e3,
        fc.at("max").to_number<double>() / 1e3, g.at("min").to_number<double>(), g.at("mean").to_number<double>(),
        g.at("max").to_number<double>());
    os << line;
    print_goodput_rows(os, "aggregate goodput", r);
}

void simulation::print_goodput_rows(std::ostream& os, const char* what, const workload_result& r) {
    char line[256];
    for (const workload_row& row : r.rows) {
        const double secs = static_cast<double>(row.elapsed_ps) * 1e-12;
        std::snprintf(line, sizeof line, "%s: %.2f Gb/s over %.3f us; data %s\n", what,
                      secs > 0 ? static_cast<double>(row.bytes) * 8 / secs / 1e9 : 0.0, secs * 1e6,
                      row.integrity.ok ? "ok" : "CORRUPT");
        os << line;
        if (!row.integrity.ok) os << "integrity: " << row.integrity.detail << "\n";
    }
    if (!r.error.empty()) os << "workload error: " << r.error << "\n";
}

}  // namespace rnic::platform
