// End-to-end runs of the default platform: results content, integrity, determinism.
#include <gtest/gtest.h>

#include "run_helpers.h"

namespace rnic::test {
namespace {

boost::json::value run_quick(const std::string& tag, std::vector<std::string> extra = {}) {
    const std::string results = temp_path(tag + ".json");
    std::vector<std::string> args = quick_args();
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back("--results");
    args.push_back(results);
    const sim_run r = run_sim(args);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return read_json(results);
}

TEST(SimRun, WritesArePlacedIntactAndReported) {
    boost::json::value v = run_quick("basic");
    const auto& o = v.as_object();
    EXPECT_EQ(o.at("status").as_string(), "ok");
    // Every size ran its iterations and the receiver's memory matched the sender's source.
    const auto& rows = o.at("workload").at("rows").as_array();
    ASSERT_EQ(rows.size(), 3u);
    const std::uint64_t sizes[] = {64, 1500, 9000};
    std::uint64_t expected_checked = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& row = rows[i].as_object();
        EXPECT_EQ(row.at("size").to_number<std::uint64_t>(), sizes[i]);
        EXPECT_EQ(row.at("iterations").to_number<std::uint64_t>(), 60u);
        EXPECT_EQ(row.at("bytes").to_number<std::uint64_t>(), sizes[i] * 60);
        EXPECT_TRUE(row.at("integrity_ok").as_bool());
        EXPECT_GT(row.at("goodput_gbps").to_number<double>(), 0.0);
        const auto& lat = row.at("latency_ns").as_object();
        EXPECT_LE(lat.at("min").to_number<double>(), lat.at("p50").to_number<double>());
        EXPECT_LE(lat.at("p50").to_number<double>(), lat.at("p99").to_number<double>());
        EXPECT_LE(lat.at("p99").to_number<double>(), lat.at("max").to_number<double>());
        // 60 writes of `size` walk through the 1 MiB buffer: all of it is checked when it fits.
        expected_checked += std::min<std::uint64_t>(sizes[i] * 60, (1u << 20) / sizes[i] * sizes[i]);
    }
    EXPECT_TRUE(o.at("integrity").at("ok").as_bool());
    EXPECT_EQ(o.at("integrity").at("bytes_checked").to_number<std::uint64_t>(), expected_checked);
    EXPECT_EQ(o.at("integrity").at("bytes_mismatched").to_number<std::uint64_t>(), 0u);
    EXPECT_EQ(o.at("operations").at("rdma_write").at("count").to_number<std::uint64_t>(), 180u);

    // The bytes went through every layer: PCIe reads on a, MPA FPDUs with good CRCs, TCP frames on
    // the link, DMA writes on b, CQEs on a.
    const auto& m = o.at("modules").as_object();
    const auto& a_rnic = m.at("a.rnic").as_object();
    const auto& b_rnic = m.at("b.rnic").as_object();
    const std::uint64_t payload = 60 * (64 + 1500 + 9000);
    EXPECT_EQ(b_rnic.at("rdma").at("placed_bytes").to_number<std::uint64_t>(), payload);
    EXPECT_EQ(a_rnic.at("rdma").at("rdma_write_bytes").to_number<std::uint64_t>(), payload);
    EXPECT_GE(a_rnic.at("rdma").at("cqes").to_number<std::uint64_t>(), 180u);
    EXPECT_GT(a_rnic.at("framer").at("tx_fpdus").to_number<std::uint64_t>(), 180u);
    EXPECT_EQ(b_rnic.at("framer").at("crc_errors").to_number<std::uint64_t>(), 0u);
    EXPECT_EQ(b_rnic.at("framer").at("rx_fpdus").to_number<std::uint64_t>(),
              a_rnic.at("framer").at("tx_fpdus").to_number<std::uint64_t>());
    EXPECT_GE(m.at("a.pcie").at("upstream").at("mrd").to_number<std::uint64_t>(), 180u);
    EXPECT_GE(m.at("b.pcie").at("upstream").at("mwr_payload_bytes").to_number<std::uint64_t>(), payload);
    EXPECT_GT(m.at("link").at("a_to_b").at("frames").to_number<std::uint64_t>(), 180u);
    EXPECT_EQ(m.at("a.mem").at("dma_refused").to_number<std::uint64_t>(), 0u);
    EXPECT_EQ(m.at("b.mem").at("dma_refused").to_number<std::uint64_t>(), 0u);
    // Wall-clock figures live only under "wallclock".
    EXPECT_TRUE(o.contains("wallclock"));
    EXPECT_GT(o.at("wallclock").at("seconds").to_number<double>(), 0.0);
}

TEST(SimRun, SameScenarioAndSeedGiveIdenticalResults) {
    boost::json::value a = run_quick("det1", {"--seed", "7"});
    boost::json::value b = run_quick("det2", {"--seed", "7"});
    a.as_object().erase("wallclock");
    b.as_object().erase("wallclock");
    EXPECT_EQ(boost::json::serialize(a), boost::json::serialize(b));
    EXPECT_EQ(a.at("seed").to_number<std::int64_t>(), 7);
}

TEST(SimRun, ScenarioAsRunCarriesOverrides) {
    boost::json::value v = run_quick("asrun", {"--set", "link.rate=40Gbps", "--set", "pcie.lanes=16"});
    const auto& sc = v.at("scenario").as_object();
    EXPECT_EQ(sc.at("link").at("rate").as_string(), "40Gbps");
    EXPECT_EQ(sc.at("pcie").at("lanes").to_number<std::int64_t>(), 16);
    EXPECT_EQ(v.at("modules").at("link").at("rate_gbps").to_number<double>(), 40.0);
}

TEST(SimRun, MpaRevisionTwoAndEventCompletionsWork) {
    boost::json::value v = run_quick("rev2", {"--set", "rnic.mpa.revision=2", "--set", "workload.completion=event"});
    EXPECT_EQ(v.at("status").as_string(), "ok");
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    EXPECT_GT(v.at("modules").at("a.rnic").at("rdma").at("interrupts").to_number<std::uint64_t>(), 0u);
}

TEST(SimRun, SendsAreReceivedIntoPostedBuffersIntact) {
    const std::string pcap = temp_path("send.pcap");
    boost::json::value v = run_quick("send", {"--set", "workload.type=send_bw", "--pcap", pcap});
    EXPECT_EQ(v.at("status").as_string(), "ok");
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    EXPECT_EQ(v.at("operations").at("send").at("count").to_number<std::uint64_t>(), 180u);
    const auto& b = v.at("modules").at("b.rnic").at("rdma").as_object();
    EXPECT_EQ(b.at("recv_completions").to_number<std::uint64_t>(), 180u);
    EXPECT_EQ(b.at("placed_bytes").to_number<std::uint64_t>(), 60u * (64 + 1500 + 9000));
    EXPECT_EQ(v.at("modules").at("a.rnic").at("rdma").at("sends").to_number<std::uint64_t>(), 180u);
    // The checker reframes the Sends and checks their queue number, MSN and MO sequence.
    const std::string check = pcap_check(pcap);
    EXPECT_NE(check.find("exit=0"), std::string::npos) << check;
    EXPECT_NE(check.find("Send (3)"), std::string::npos) << check;
}

TEST(SimRun, ReadsFetchTheServersBytesIntact) {
    const std::string pcap = temp_path("read.pcap");
    boost::json::value v =
        run_quick("read", {"--set", "workload.type=read_bw", "--set", "link.b_to_a.loss=0.01", "--pcap", pcap});
    EXPECT_EQ(v.at("status").as_string(), "ok");
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    EXPECT_EQ(v.at("operations").at("rdma_read").at("count").to_number<std::uint64_t>(), 180u);
    const auto& a = v.at("modules").at("a.rnic").at("rdma").as_object();
    EXPECT_EQ(a.at("rdma_reads").to_number<std::uint64_t>(), 180u);
    EXPECT_EQ(a.at("rdma_read_bytes").to_number<std::uint64_t>(), 60u * (64 + 1500 + 9000));
    EXPECT_EQ(v.at("modules").at("b.rnic").at("rdma").at("read_responses_sent").to_number<std::uint64_t>(), 180u);
    const std::string out = pcap_check(pcap);
    EXPECT_NE(out.find("exit=0"), std::string::npos) << out;
    EXPECT_NE(out.find("RDMA Read Request (1) 180"), std::string::npos) << out;
}

TEST(SimRun, FetchAddsOnOneCounterAreLinearizable) {
    // The workload checks that the counter ends at the number of FetchAdd(1)s and that the returned
    // originals are exactly 0..n-1; loss and reordering must not change that.
    const std::string pcap = temp_path("atomic.pcap");
    boost::json::value v =
        run_quick("atomic", {"--set", "workload.type=atomic_bw", "--set", "workload.iterations=500", "--set",
                             "link.a_to_b.loss=0.01", "--set", "link.a_to_b.reorder=0.02", "--pcap", pcap});
    EXPECT_EQ(v.at("status").as_string(), "ok");
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    EXPECT_EQ(v.at("integrity").at("bytes_checked").to_number<std::uint64_t>(), 500u * 8 + 8);
    EXPECT_EQ(v.at("modules").at("b.rnic").at("rdma").at("atomics_executed").to_number<std::uint64_t>(), 500u);
    const std::string out = pcap_check(pcap);
    EXPECT_NE(out.find("exit=0"), std::string::npos) << out;
    EXPECT_NE(out.find("Atomic Request (10) 500 [FetchAdd 500"), std::string::npos) << out;
    EXPECT_NE(out.find("Atomic Response (11) 500"), std::string::npos) << out;
}

TEST(SimRun, ReadModifyWriteAtomicsHoldTheUnitsLockFromReadToWrite) {
    // RFC 7306 §5: a read-modify-write unit is atomic only if no other RMW reads while one is in
    // flight, so at any queue depth FetchAdds on one counter take at least a DMA read round trip
    // each, in either booking order.
    for (const char* order : {"call", "time"}) {
        boost::json::value v = run_quick(
            std::string("rmw-") + order,
            {"--set", "workload.type=atomic_bw", "--set", "workload.iterations=500", "--set", "workload.queue_depth=16",
             "--set", "rnic.rdma.atomics=rmw", "--set", std::string("simulation.resource_order=") + order});
        ASSERT_EQ(v.at("status").as_string(), "ok") << order;
        const double ops_per_s = v.at("workload").at("rows").at(0).at("message_rate_mpps").to_number<double>() * 1e6;
        const double read_s =
            v.at("modules").at("b.rnic").at("dma").at("read_latency").at("mean_ns").to_number<double>() * 1e-9;
        EXPECT_LE(ops_per_s * read_s, 1.0) << order << ": " << ops_per_s << " ops/s, reads of " << read_s << " s";
        EXPECT_GT(ops_per_s * read_s, 0.8) << order;  // and little more: the write overlaps the next read's set-up
    }
}

TEST(SimRun, TimeOrderedResourcesLetAWqeFetchPassCompletionWritesBookedForLater) {
    // simulation.resource_order (docs/architecture.md, "Timing discipline"): in call order the
    // requester's WQE fetches wait on the PCIe link behind the atomic results and CQEs its completion
    // handler booked for later; in time order they take the idle link.
    double rate[2] = {}, read_ns[2] = {};
    const char* const orders[] = {"call", "time"};
    for (int i = 0; i < 2; ++i) {
        boost::json::value v =
            run_quick(std::string("order-") + orders[i],
                      {"--set", "workload.type=atomic_bw", "--set", "workload.iterations=500", "--set",
                       "workload.queue_depth=16", "--set", "rnic.rdma.atomics=pcie_atomicop", "--set",
                       std::string("simulation.resource_order=") + orders[i]});
        ASSERT_EQ(v.at("status").as_string(), "ok") << orders[i];
        EXPECT_TRUE(v.at("integrity").at("ok").as_bool()) << orders[i];
        rate[i] = v.at("workload").at("rows").at(0).at("message_rate_mpps").to_number<double>();
        read_ns[i] = v.at("modules").at("a.rnic").at("dma").at("read_latency").at("mean_ns").to_number<double>();
    }
    EXPECT_LT(read_ns[1], read_ns[0] - 50.0) << "WQE fetch latency, call " << read_ns[0] << " ns, time " << read_ns[1];
    EXPECT_GT(rate[1], rate[0] * 1.03) << "call " << rate[0] << " Mops/s, time " << rate[1];
}

TEST(SimRun, MarkerFragmentingDmaCostsBusTransfersAndTheTimelineRecordsThem) {
    // Seed 001 §6: a DMA that cannot skip markers breaks each placement at every marker.
    std::uint64_t transfers[2] = {}, fragments[2] = {};
    const char* const modes[] = {"skip", "fragment"};
    for (int i = 0; i < 2; ++i) {
        const std::string results = temp_path(std::string("dma-") + modes[i] + ".json");
        const std::string timeline = temp_path(std::string("dma-") + modes[i] + ".trace.json");
        const sim_run r =
            run_sim({"--set", "rnic.mpa.markers=true", "--set", std::string("rnic.dma.markers=") + modes[i], "--set",
                     "workload.sizes=[9000]", "--set", "workload.iterations=50", "--results", results, "--timeline",
                     timeline, "--log", "error"});
        ASSERT_EQ(r.exit_code, 0) << r.output;
        const boost::json::value v = read_json(results);
        EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
        const auto& dma = v.at("modules").at("b.rnic").at("dma").as_object();
        transfers[i] = dma.at("bus_transfers").to_number<std::uint64_t>();
        fragments[i] = dma.at("marker_fragments").to_number<std::uint64_t>();
        const boost::json::value trace = read_json(timeline);
        const auto& events = trace.is_object() ? trace.at("traceEvents").as_array() : trace.as_array();
        EXPECT_GT(events.size(), 1000u);
    }
    EXPECT_EQ(fragments[0], 0u);
    EXPECT_GT(fragments[1], 0u);
    EXPECT_EQ(transfers[1], transfers[0] + fragments[1]);
}

// The firmware's handler costs are on the connection set-up path: each MPA frame is built or
// parsed once at each end (the initiator's Request and the responder's Reply: four handlers), the
// connect command once. At the control processor's 1 GHz a cycle is 1 ns.
TEST(SimRun, FirmwareCostsShowInConnectionSetUpLatency) {
    auto connect_ns = [](const std::string& set) {
        const std::string results = temp_path("fwcost-" + set.substr(set.find('.') + 1) + ".json");
        const sim_run r = run_sim({"--set", "workload.type=write_lat", "--set", "workload.sizes=[8]", "--set",
                                   "workload.iterations=10", "--set", set, "--results", results});
        EXPECT_EQ(r.exit_code, 0) << r.output;
        return read_json(results).at("workload").at("connect_latency_ns").to_number<double>();
    };
    const double base = connect_ns("rnic.cp.mpa_frame_cycles=2500");
    EXPECT_NEAR(connect_ns("rnic.cp.mpa_frame_cycles=12500") - base, 4 * 10000.0, 1.0);
    EXPECT_NEAR(connect_ns("rnic.cp.command_cycles=11500") - base, 10000.0, 1.0);
    // A slower control processor stretches every handler on the path.
    EXPECT_GT(connect_ns("rnic.cp.clock=250MHz") - base, 3 * (4 * 2500.0 + 1500.0));
}

TEST(SimRun, HelpDescribesOptionsAndScenarioKeys) {
    const sim_run help = run_sim({"--help"});
    EXPECT_EQ(help.exit_code, 0);
    for (const char* opt : {"--scenario", "--set", "--seed", "--results", "--pcap", "--log", "--help"}) {
        EXPECT_NE(help.output.find(opt), std::string::npos) << opt;
    }
    const sim_run keys = run_sim({"--help-scenario"});
    EXPECT_EQ(keys.exit_code, 0);
    EXPECT_NE(keys.output.find("link.rate"), std::string::npos);
    EXPECT_NE(keys.output.find("rnic.mpa.markers"), std::string::npos);
}

TEST(SimRun, LogLinesCarryTimeModuleCategoryAndLevel) {
    std::vector<std::string> args = quick_args();
    args.push_back("--log");
    args.push_back("warn,fw=info,drv=info");
    const sim_run r = run_sim(args);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    // e.g. "[       0.000000 us] info  fw   a.rnic.cp: firmware running"
    EXPECT_NE(r.output.find(" us] info  fw   a.rnic.cp: firmware running"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(" us] info  drv  b.driver: device ready"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace rnic::test
