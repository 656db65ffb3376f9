// Whole runs of a fabric (docs/architecture.md, "Fabric"): incast on a star and on a leaf-spine,
// every byte checked, the same results for the same seed, losses from the switch recovered, a
// two-host workload between any two hosts, and the captures.
#include <gtest/gtest.h>

#include <set>

#include "run_helpers.h"

namespace rnic::test {
namespace {

struct fabric_run {
    sim_run run;
    boost::json::value results;
};

fabric_run run_fabric(const std::string& tag, const std::vector<std::string>& sets,
                      const std::vector<std::string>& extra = {}) {
    fabric_run out;
    const std::string results = temp_path(tag + ".json");
    std::vector<std::string> args = {"--log", "warn", "--results", results};
    for (const std::string& s : sets) {
        args.push_back("--set");
        args.push_back(s);
    }
    args.insert(args.end(), extra.begin(), extra.end());
    out.run = run_sim(args);
    if (out.run.exit_code == 0 || out.run.exit_code == 1) out.results = read_json(results);
    return out;
}

std::uint64_t u64(const boost::json::value& v) {
    return v.to_number<std::uint64_t>();
}

std::uint64_t switch_drops(const boost::json::object& sw) {
    std::uint64_t drops = 0;
    for (const auto& kv : sw) {
        if (kv.key().substr(0, 5) != "port_") continue;
        for (const auto& d : kv.value().at("drops").as_object()) drops += u64(d.value());
    }
    return drops;
}

const std::vector<std::string> kStarIncast = {"topology.kind=star",         "topology.hosts=8",
                                              "workload.type=incast",       "workload.qps=2",
                                              "workload.incast.size=32KiB", "workload.incast.rounds=4"};

// The per-flow list: `count` flows, each complete with `bytes`, whose smallest and largest goodput are
// the summary's min and max.
void expect_per_flow(const boost::json::object& f, std::size_t count, std::uint64_t bytes) {
    const auto& flows = f.at("per_flow").as_array();
    ASSERT_EQ(flows.size(), count);
    double lo = 1e300, hi = 0;
    for (const auto& fl : flows) {
        EXPECT_EQ(u64(fl.at("bytes")), bytes) << fl;
        const double ns = fl.at("completion_ns").to_number<double>();
        const double gbps = fl.at("goodput_gbps").to_number<double>();
        ASSERT_GT(ns, 0.0) << fl;
        EXPECT_NEAR(gbps, static_cast<double>(bytes) * 8 / ns, 1e-9 * gbps) << fl;
        EXPECT_NE(fl.at("src"), fl.at("dst"));
        lo = std::min(lo, gbps);
        hi = std::max(hi, gbps);
    }
    EXPECT_DOUBLE_EQ(lo, f.at("flow_goodput_gbps").at("min").to_number<double>());
    EXPECT_DOUBLE_EQ(hi, f.at("flow_goodput_gbps").at("max").to_number<double>());
}

TEST(Fabric, IncastOnAStarDeliversEveryByte) {
    const fabric_run r = run_fabric("incast_star", kStarIncast);
    ASSERT_EQ(r.run.exit_code, 0) << r.run.output;
    const auto& o = r.results.as_object();
    EXPECT_EQ(o.at("status").as_string(), "ok");
    // 7 senders x 32 KiB x 4 rounds, every byte compared with what its sender was to send.
    const std::uint64_t total = 7ull * 32768 * 4;
    EXPECT_TRUE(o.at("integrity").at("ok").as_bool());
    EXPECT_EQ(u64(o.at("integrity").at("bytes_checked")), total);
    EXPECT_EQ(u64(o.at("integrity").at("bytes_mismatched")), 0u);
    const auto& f = o.at("fabric_workload").as_object();
    EXPECT_EQ(u64(f.at("senders")), 7u);
    EXPECT_EQ(f.at("round_completion_ns").as_array().size(), 4u);
    expect_per_flow(f, 7u * 4 * 2, 16384);  // 7 senders x 4 rounds x 2 QPs, 16 KiB each
    const auto& fc = f.at("flow_completion").as_object();
    EXPECT_LE(fc.at("p50").to_number<double>(), fc.at("p99").to_number<double>());
    EXPECT_LE(fc.at("p99").to_number<double>(), fc.at("max").to_number<double>());
    // A round ends with its last flow.
    double max_round = 0;
    for (const auto& t : f.at("round_completion_ns").as_array()) max_round = std::max(max_round, t.to_number<double>());
    EXPECT_DOUBLE_EQ(max_round, fc.at("max").to_number<double>());
    // Per-host rows: 7 senders and the receiver, each sender's bytes all delivered.
    const auto& hosts = f.at("hosts").as_array();
    ASSERT_EQ(hosts.size(), 8u);
    for (std::size_t i = 0; i + 1 < hosts.size(); ++i) EXPECT_EQ(u64(hosts[i].at("bytes_delivered")), 32768u * 4);
    EXPECT_EQ(u64(hosts.back().at("bytes_received")), total);
    // Everything crossed the switch: the receiver's port sent every Write's bytes to host a.
    const auto& m = o.at("modules").as_object();
    const auto& sw = m.at("switches").at("switch").as_object();
    EXPECT_EQ(u64(sw.at("ports")), 8u);
    EXPECT_GT(u64(sw.at("port_0").at("bytes_out")), total);
    EXPECT_EQ(switch_drops(sw), 0u);
    EXPECT_EQ(u64(m.at("a.rnic").at("rdma").at("placed_bytes")), total);
    EXPECT_EQ(m.at("links").as_object().size(), 8u);
    EXPECT_EQ(o.at("topology").at("attachment").at("h7").at("port").to_number<int>(), 7);
}

TEST(Fabric, IncastIsDeterministicPerSeed) {
    auto strip = [](boost::json::value v) {
        v.as_object().erase("wallclock");
        return boost::json::serialize(v);
    };
    const fabric_run a = run_fabric("det_a", kStarIncast);
    const fabric_run b = run_fabric("det_b", kStarIncast);
    ASSERT_EQ(a.run.exit_code, 0) << a.run.output;
    EXPECT_EQ(strip(a.results), strip(b.results));
    std::vector<std::string> other = kStarIncast;
    other.push_back("simulation.seed=7");
    const fabric_run c = run_fabric("det_c", other);
    ASSERT_EQ(c.run.exit_code, 0) << c.run.output;
    EXPECT_NE(strip(a.results), strip(c.results));
}

TEST(Fabric, SwitchDropsUnderIncastAreRecoveredByTcp) {
    // A shallow buffer: the receiver's output queue overflows, TCP retransmits, no byte is lost.
    std::vector<std::string> sets = kStarIncast;
    sets.push_back("switch.buffer=48KiB");
    sets.push_back("workload.incast.size=64KiB");
    const fabric_run r = run_fabric("incast_drops", sets);
    ASSERT_EQ(r.run.exit_code, 0) << r.run.output;
    const auto& o = r.results.as_object();
    EXPECT_TRUE(o.at("integrity").at("ok").as_bool());
    EXPECT_EQ(u64(o.at("integrity").at("bytes_checked")), 7ull * 65536 * 4);
    const auto& sw = o.at("modules").at("switches").at("switch").as_object();
    EXPECT_GT(switch_drops(sw), 0u);
    EXPECT_LE(u64(sw.at("buffer_peak_bytes")), 48u * 1024);
    std::uint64_t retransmitted = 0;
    for (const auto& kv : o.at("modules").as_object()) {
        if (kv.key().size() > 5 && kv.key().substr(kv.key().size() - 5) == ".rnic") {
            retransmitted += u64(kv.value().at("toe").at("tx_retransmitted_from_buffer_bytes"));
        }
    }
    EXPECT_GT(retransmitted, 0u);
}

TEST(Fabric, PfcMakesTheIncastLossless) {
    // The same overflowing incast without and with 802.1Qbb PFC: drops without, none with, the
    // switch pausing the senders' ports and their NICs honouring it (each sender received pauses).
    std::vector<std::string> sets = {"topology.kind=star",         "topology.hosts=17",  "workload.type=incast",
                                     "workload.incast.rounds=3",   "switch.buffer=1MiB", "rnic.buffer.capacity=16MiB",
                                     "rnic.tcp.send_buffer=64KiB", "pcie.generation=4",  "pcie.lanes=16"};
    const fabric_run lossy = run_fabric("pfc_off", sets);
    sets.push_back("switch.pfc.enabled=true");
    const fabric_run lossless = run_fabric("pfc_on", sets);
    ASSERT_EQ(lossy.run.exit_code, 0) << lossy.run.output;
    ASSERT_EQ(lossless.run.exit_code, 0) << lossless.run.output;
    const auto& off = lossy.results.at("modules").as_object();
    const auto& on = lossless.results.at("modules").as_object();
    EXPECT_GT(switch_drops(off.at("switches").at("switch").as_object()), 0u);
    EXPECT_EQ(switch_drops(on.at("switches").at("switch").as_object()), 0u);
    EXPECT_TRUE(lossless.results.at("integrity").at("ok").as_bool());
    std::uint64_t pauses_sent = 0;
    for (const auto& kv : on.at("switches").at("switch").as_object()) {
        if (kv.key().substr(0, 5) == "port_") pauses_sent += u64(kv.value().at("pause_sent"));
    }
    EXPECT_GT(pauses_sent, 0u);
    std::uint64_t pauses_received = 0, resumes = 0;
    for (int h = 1; h < 17; ++h) {
        const std::string name = h == 1 ? "b.rnic" : "h" + std::to_string(h) + ".rnic";
        const auto& fc = on.at(name).at("toe").at("flow_control").as_object();
        pauses_received += u64(fc.at("pause_frames_received"));
        resumes += u64(fc.at("resume_frames_received"));
        EXPECT_EQ(u64(fc.at("ignored_mac_control_frames")), 0u);
    }
    EXPECT_GT(pauses_received, 0u);
    EXPECT_GT(resumes, 0u);
    // Without PFC negotiated no NIC reports flow control.
    EXPECT_FALSE(off.at("b.rnic").at("toe").as_object().contains("flow_control"));
}

TEST(Fabric, EcnMarksInsteadOfDrops) {
    // The overflowing incast again, with ECN on the switch and the NICs (RFC 3168): the switch marks
    // CE instead of dropping, the receiver echoes ECE, the senders halve their windows and say CWR.
    std::vector<std::string> sets = {"topology.kind=star",         "topology.hosts=17",  "workload.type=incast",
                                     "workload.incast.rounds=3",   "switch.buffer=1MiB", "rnic.buffer.capacity=16MiB",
                                     "rnic.tcp.send_buffer=64KiB", "pcie.generation=4",  "pcie.lanes=16",
                                     "switch.ecn.enabled=true",    "rnic.tcp.ecn=true"};
    const fabric_run r = run_fabric("ecn_on", sets);
    ASSERT_EQ(r.run.exit_code, 0) << r.run.output;
    EXPECT_TRUE(r.results.at("integrity").at("ok").as_bool());
    const auto& m = r.results.at("modules").as_object();
    const auto& sw = m.at("switches").at("switch").as_object();
    EXPECT_EQ(switch_drops(sw), 0u);
    std::uint64_t marks = 0;
    for (const auto& kv : sw) {
        if (kv.key().substr(0, 5) == "port_") marks += u64(kv.value().at("ecn_marked"));
    }
    EXPECT_GT(marks, 0u);
    // The receiver saw the CE marks; a sender reduced and announced it.
    std::uint64_t ce = 0;
    for (const auto& c : m.at("a.rnic").at("toe").at("connections").as_array()) {
        EXPECT_TRUE(c.at("ecn").at("negotiated").as_bool());
        ce += u64(c.at("ecn").at("ce_received"));
    }
    EXPECT_EQ(ce, marks);
    const auto& sender = m.at("b.rnic").at("toe").at("connections").as_array().at(0).at("ecn").as_object();
    EXPECT_GT(u64(sender.at("ece_received")), 0u);
    EXPECT_GT(u64(sender.at("cwnd_reductions")), 0u);
    EXPECT_GT(u64(sender.at("cwr_sent")), 0u);
}

TEST(Fabric, EcnBackToBackNegotiatesAndCompletes) {
    // No switch, nothing marks: ECN is negotiated and changes nothing else.
    const fabric_run r =
        run_fabric("ecn_b2b", {"rnic.tcp.ecn=true", "workload.sizes=[4096]", "workload.iterations=100"});
    ASSERT_EQ(r.run.exit_code, 0) << r.run.output;
    const auto& c = r.results.at("modules").at("a.rnic").at("toe").at("connections").as_array().at(0).at("ecn");
    EXPECT_TRUE(c.at("negotiated").as_bool());
    EXPECT_EQ(u64(c.at("ce_received")), 0u);
    EXPECT_EQ(u64(c.at("cwnd_reductions")), 0u);
}

TEST(Fabric, AllToAllOnAStar) {
    const fabric_run r = run_fabric(
        "all_to_all", {"topology.kind=star", "topology.hosts=4", "workload.type=all_to_all",
                       "workload.matrix.size=16KiB", "workload.matrix.messages=8", "workload.queue_depth=4"});
    ASSERT_EQ(r.run.exit_code, 0) << r.run.output;
    const auto& o = r.results.as_object();
    EXPECT_TRUE(o.at("integrity").at("ok").as_bool());
    // 12 flows; each flow's 4 slots of 16 KiB compared at both ends.
    EXPECT_EQ(u64(o.at("integrity").at("bytes_checked")), 12u * 4 * 16384);
    const auto& f = o.at("fabric_workload").as_object();
    EXPECT_EQ(u64(f.at("flows")), 12u);
    expect_per_flow(f, 12u, 8u * 16384);
    for (const auto& h : f.at("hosts").as_array()) {
        EXPECT_EQ(u64(h.at("bytes_sent")), 3u * 8 * 16384) << h;
        EXPECT_EQ(u64(h.at("bytes_received")), 3u * 8 * 16384) << h;
    }
    EXPECT_EQ(u64(o.at("operations").at("flow").at("count")), 12u * 8);
}

// workload.idle_poll=sleep: the hosts sleep through their empty poll passes. Flows that start after a
// jitter must still be posted on time (a host whose flows have not started has no completion to wake
// it, so it must keep running its passes), every byte arrives, and the flows finish when they did
// with every pass run, within the noise of the order of simultaneous events.
TEST(Fabric, SleepingThroughEmptyPollPassesPostsOnTimeAndDeliversEveryByte) {
    const std::vector<std::string> sets = {"topology.kind=star",         "topology.hosts=6",
                                           "workload.type=all_to_all",   "workload.matrix.size=16KiB",
                                           "workload.matrix.messages=4", "workload.queue_depth=2",
                                           "workload.matrix.jitter=20us"};
    std::vector<std::string> sleeping = sets;
    sleeping.push_back("workload.idle_poll=sleep");
    const fabric_run pass = run_fabric("idle_pass", sets);
    const fabric_run sleep = run_fabric("idle_sleep", sleeping);
    ASSERT_EQ(pass.run.exit_code, 0) << pass.run.output;
    ASSERT_EQ(sleep.run.exit_code, 0) << sleep.run.output;
    EXPECT_TRUE(sleep.results.at("integrity").at("ok").as_bool());
    const auto& fp = pass.results.at("fabric_workload").as_object();
    const auto& fs = sleep.results.at("fabric_workload").as_object();
    expect_per_flow(fs, 30u, 4u * 16384);
    for (const char* q : {"p50", "max"}) {
        const double a = fp.at("flow_completion").at(q).to_number<double>();
        const double b = fs.at("flow_completion").at(q).to_number<double>();
        EXPECT_NEAR(b, a, 0.02 * a) << q;
    }
}

TEST(Fabric, WqeFetchesInFlightLetAnIncastReceiverAskEveryQpSooner) {
    // 16 senders x 16 QPs: the receiver posts a request on each of 256 QPs at once. Reading one
    // QP's WQEs at a time, its NIC sends them one PCIe round trip apart (0.64 us: 162 us for all,
    // measured 2026-11-29); with eight reads in flight the round is about half as long.
    const std::vector<std::string> sets = {
        "topology.kind=star",           "topology.hosts=17",          "workload.type=incast", "workload.qps=16",
        "workload.incast.size=4KiB",    "workload.incast.rounds=2",   "rnic.rdma.max_qp=256", "rnic.rdma.max_cq=256",
        "rnic.tcp.max_connections=256", "rnic.buffer.capacity=128MiB"};
    std::vector<std::string> ahead = sets;
    ahead.push_back("rnic.rdma.wqe_fetch_depth=8");
    const fabric_run serial = run_fabric("fetch_serial", sets);
    const fabric_run overlapped = run_fabric("fetch_ahead", ahead);
    ASSERT_EQ(serial.run.exit_code, 0) << serial.run.output;
    ASSERT_EQ(overlapped.run.exit_code, 0) << overlapped.run.output;
    for (const fabric_run* r : {&serial, &overlapped}) {
        EXPECT_TRUE(r->results.at("integrity").at("ok").as_bool());
        expect_per_flow(r->results.at("fabric_workload").as_object(), 256u * 2, 4096 / 16);
    }
    const auto& rs = serial.results.at("fabric_workload").at("round_completion").as_object();
    const auto& ro = overlapped.results.at("fabric_workload").at("round_completion").as_object();
    const double serial_max = rs.at("max").to_number<double>(), ahead_max = ro.at("max").to_number<double>();
    EXPECT_GT(serial_max, 150e3);  // the request train alone is 162 us
    EXPECT_LT(ahead_max, 0.6 * serial_max) << ahead_max << " vs " << serial_max;
}

TEST(Fabric, PermutationIsADerangementAndDeliversEveryByte) {
    const fabric_run r = run_fabric("permutation", {"topology.kind=leaf_spine", "topology.hosts=8", "topology.leaves=2",
                                                    "workload.type=permutation", "workload.matrix.messages=8"});
    ASSERT_EQ(r.run.exit_code, 0) << r.run.output;
    const auto& o = r.results.as_object();
    EXPECT_TRUE(o.at("integrity").at("ok").as_bool());
    const auto& pairs = o.at("fabric_workload").at("pairs").as_array();
    ASSERT_EQ(pairs.size(), 8u);
    std::set<std::string> sources, destinations;
    for (const auto& p : pairs) {
        const std::string src(p.at(0).as_string()), dst(p.at(1).as_string());
        EXPECT_NE(src, dst);
        sources.insert(src);
        destinations.insert(dst);
    }
    EXPECT_EQ(sources.size(), 8u);       // every host sends once
    EXPECT_EQ(destinations.size(), 8u);  // and receives once
}

TEST(Fabric, DoorbellsArrivingAfterTheEngineSleptAreServed) {
    // Regression: two hosts sending to each other with 16 Writes outstanding stalled when an SQ
    // doorbell arrived after the transmit thread had gone to sleep (its notification was dropped
    // for an earlier one); the engine now wakes at the next doorbell's arrival.
    const fabric_run r = run_fabric("doorbells", {"topology.kind=star", "topology.hosts=2", "workload.type=all_to_all",
                                                  "workload.queue_depth=16", "simulation.time_limit=50ms"});
    ASSERT_EQ(r.run.exit_code, 0) << r.run.output;
    EXPECT_TRUE(r.results.at("integrity").at("ok").as_bool());
}

TEST(Fabric, LeafSpineSpreadsFlowsOverTheSpines) {
    // 8 hosts under 2 leaves; the senders under leaf 1 reach host a over either spine, by flow.
    const fabric_run r = run_fabric(
        "leaf_spine", {"topology.kind=leaf_spine", "topology.hosts=8", "topology.leaves=2", "topology.spines=2",
                       "workload.type=incast", "workload.qps=4", "rnic.buffer.capacity=16MiB",
                       "workload.incast.size=32KiB", "workload.incast.rounds=2"});
    ASSERT_EQ(r.run.exit_code, 0) << r.run.output;
    const auto& o = r.results.as_object();
    EXPECT_TRUE(o.at("integrity").at("ok").as_bool());
    EXPECT_EQ(u64(o.at("integrity").at("bytes_checked")), 7ull * 32768 * 2);
    const auto& sws = o.at("modules").at("switches").as_object();
    ASSERT_EQ(sws.size(), 4u);  // leaf0, leaf1, spine0, spine1
    for (const char* spine : {"spine0", "spine1"}) {
        // Spine port 1 faces leaf 1, where the four remote senders' 16 flows come from.
        EXPECT_GT(u64(sws.at(spine).at("port_1").at("frames_in")), 0u) << spine << " carried nothing";
    }
    EXPECT_EQ(o.at("modules").at("uplinks").as_object().size(), 4u);
    EXPECT_EQ(o.at("topology").at("attachment").at("h5").at("switch").as_string(), "leaf1");
}

TEST(Fabric, TwoHostWorkloadBetweenAnyTwoHosts) {
    const fabric_run r =
        run_fabric("client_server", {"topology.kind=star", "topology.hosts=6", "workload.client=2", "workload.server=5",
                                     "workload.sizes=[4096]", "workload.iterations=50"});
    ASSERT_EQ(r.run.exit_code, 0) << r.run.output;
    const auto& o = r.results.as_object();
    EXPECT_TRUE(o.at("integrity").at("ok").as_bool());
    EXPECT_EQ(u64(o.at("integrity").at("bytes_checked")), 4096u * 50);
    const auto& m = o.at("modules").as_object();
    EXPECT_EQ(u64(m.at("h5.rnic").at("rdma").at("placed_bytes")), 4096u * 50);
    // Hosts 0, 1, 3 and 4 run nothing and send nothing.
    for (const char* idle : {"a", "b", "h3", "h4"}) {
        EXPECT_EQ(u64(m.at("links").at(idle).at("a_to_b").at("frames")), 0u) << idle;
    }
}

TEST(Fabric, CapturesPerHostLinkAndAsDelivered) {
    const std::string dir = temp_path("pcaps");
    shell("mkdir -p " + dir);
    const std::vector<std::string> sets = {"topology.kind=star", "topology.hosts=3", "workload.type=incast",
                                           "workload.incast.size=16KiB", "workload.incast.rounds=2"};
    const fabric_run per_link = run_fabric("pcap_per_link", sets, {"--pcap", dir + "/link_%h.pcap"});
    ASSERT_EQ(per_link.run.exit_code, 0) << per_link.run.output;
    for (const char* host : {"a", "b", "h2"}) {
        const std::string report = pcap_check(dir + "/link_" + std::string(host) + ".pcap");
        EXPECT_NE(report.find("exit=0"), std::string::npos) << host << ": " << report;
        EXPECT_NE(report.find("0 bad CRC"), std::string::npos) << host << ": " << report;
    }
    const fabric_run one = run_fabric("pcap_one", sets, {"--pcap", dir + "/all.pcap"});
    ASSERT_EQ(one.run.exit_code, 0) << one.run.output;
    const std::string report = pcap_check(dir + "/all.pcap");
    EXPECT_NE(report.find("exit=0"), std::string::npos) << report;
    // Two senders' connections to a, each frame once as delivered.
    EXPECT_NE(report.find("2 connections"), std::string::npos) << report;
}

}  // namespace
}  // namespace rnic::test
