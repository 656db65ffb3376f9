// Page-list memory regions end to end (workload.type = probe, workload.probe = page_list,
// platform/workloads/probe_page_list.cpp): both hosts register regions over 16 of 24 pages in a
// shuffled order; Writes, Reads, Sends and a FetchAdd cross page boundaries at both ends and the
// probe checks every byte and both whole arenas (the 8 unlisted pages are guards). The device
// refuses bad page lists, and a Write past the region's end into an unlisted page draws the bounds
// Terminate and writes nothing. Here: the probe's verdict, the device's counters and the wire.
#include <gtest/gtest.h>

#include "run_helpers.h"

namespace rnic::test {
namespace {

std::uint64_t u64(const boost::json::value& v) {
    return v.to_number<std::uint64_t>();
}

// Runs one probe; its results (null when the run did not get to write them), *output the log.
boost::json::value run_probe(const std::string& probe, const std::string& tag, std::vector<std::string> extra,
                             const std::string& pcap, std::string* output = nullptr) {
    const std::string results = temp_path(tag + ".json");
    std::vector<std::string> args = {"--set",     "workload.type=probe",
                                     "--set",     "workload.probe=" + probe,
                                     "--results", results,
                                     "--log",     output != nullptr ? "info" : "off"};
    if (!pcap.empty()) args.insert(args.end(), {"--pcap", pcap});
    args.insert(args.end(), extra.begin(), extra.end());
    const sim_run r = run_sim(args);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    if (output != nullptr) *output = r.output;
    if (r.exit_code != 0 && r.exit_code != 1) return {};
    return read_json(results);
}

boost::json::value run_page_list(const std::string& tag, std::vector<std::string> extra, const std::string& pcap) {
    return run_probe("page_list", tag, std::move(extra), pcap);
}

// Every row of the probe passed; returns how many there were.
std::size_t expect_rows_passed(const boost::json::value& v) {
    std::size_t rows = 0;
    if (!v.is_object()) {
        ADD_FAILURE() << "no results";
        return rows;
    }
    EXPECT_EQ(v.at("status").as_string(), "ok");
    for (const auto& row : v.at("workload").at("rows").as_array()) {
        ++rows;
        EXPECT_TRUE(row.at("integrity_ok").as_bool()) << row.at("op").as_string();
    }
    return rows;
}

void expect_every_check_passed(const boost::json::value& v) {
    ASSERT_TRUE(v.is_object());
    const std::size_t rows = expect_rows_passed(v);
    // Set-up, six device refusals and acceptances, four operations on each side, the arenas, the
    // bounds Terminate.
    EXPECT_GE(rows, 20u);
    // The one Terminate is host b's, for the Write past the end.
    EXPECT_EQ(u64(v.at("modules").at("b.rnic").at("rdma").at("terminates_sent")), 1u);
    EXPECT_EQ(u64(v.at("modules").at("a.rnic").at("rdma").at("terminates_sent")), 0u);
}

TEST(PageListRegions, WritesReadsSendsAndAtomicsCrossShuffledPages) {
    const std::string pcap = temp_path("page-list.pcap");
    const boost::json::value v = run_page_list("page-list", {}, pcap);
    expect_every_check_passed(v);
    // The wire is clean iWARP whatever the host memory looks like.
    const std::string report = pcap_check(pcap);
    EXPECT_NE(report.find("exit=0"), std::string::npos) << report;
}

TEST(PageListRegions, WithMarkersEachPageRunKnowsWhereItsMarkersWere) {
    // Markers every 512 bytes of the stream: placement splits at page boundaries and at markers.
    expect_every_check_passed(
        run_page_list("page-list-markers", {"--set", "rnic.mpa.markers=true", "--set", "rnic.rx_path=markers"}, ""));
}

TEST(PageListRegions, WithPcieAtomicOpsTheTargetStaysInOnePage) {
    const boost::json::value v = run_page_list("page-list-atomicop", {"--set", "rnic.rdma.atomics=pcie_atomicop"}, "");
    expect_every_check_passed(v);
    EXPECT_EQ(u64(v.at("modules").at("b.rnic").at("rdma").at("atomic_ops_issued")), 1u);
}

TEST(PageListRegions, WithTheContextCacheAndRetransmissionsUnderLoss) {
    // STag entries in host memory behind the cache; a lossy link makes TCP resend segments (from
    // its send buffer, the default retransmit source).
    const boost::json::value v = run_page_list(
        "page-list-lossy",
        {"--set", "rnic.context_cache.enabled=true", "--set", "link.a_to_b.loss=0.1", "--set", "link.b_to_a.loss=0.1"},
        "");
    expect_every_check_passed(v);
    EXPECT_GT(u64(v.at("modules").at("a.rnic").at("toe").at("tx_retransmitted_from_buffer_bytes")) +
                  u64(v.at("modules").at("b.rnic").at("toe").at("tx_retransmitted_from_buffer_bytes")),
              0u);
}

// CTRL.RESET with a QP (connected), a CQ and a region open, from a second driver instance: the
// probe checks the new objects are numbered from 0, the old STag is invalid, the old connection
// closed and new work runs (platform/workloads/probe_reset.cpp).
TEST(DeviceReset, ResetWithObjectsOpenThenNewObjectsFromZero) {
    std::string output;
    const boost::json::value v = run_probe("device_reset", "device-reset", {}, "", &output);
    EXPECT_GE(expect_rows_passed(v), 10u);
    // The model's own account of the reset.
    EXPECT_NE(output.find("reset: 1 QPs, 1 CQs and 1 memory regions removed"), std::string::npos) << output;
    EXPECT_NE(output.find("device reset: command ring index 0"), std::string::npos) << output;
}

}  // namespace
}  // namespace rnic::test
