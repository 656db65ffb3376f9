#include "retransmit_from_host_check.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "run_helpers.h"

namespace rnic::test {

void check_retransmit_from_host(const std::string& framing, const std::string& type,
                                const std::vector<std::string>& sets) {
    const std::string results = temp_path(framing + "-rtx-host-" + type + std::to_string(sets.size()) + ".json");
    std::vector<std::string> args = {"--set",     "rnic.framing=" + framing,
                                     "--set",     "rnic.tcp.retransmit_from=host",
                                     "--set",     "workload.type=" + type,
                                     "--set",     "workload.sizes=[4096,65536]",
                                     "--set",     "workload.iterations=150",
                                     "--set",     "link.a_to_b.loss=0.01",
                                     "--set",     "link.b_to_a.loss=0.01",
                                     "--results", results,
                                     "--log",     "error"};
    for (const std::string& kv : sets) args.insert(args.end(), {"--set", kv});
    const sim_run r = run_sim(args);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "ok");
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    EXPECT_GT(v.at("integrity").at("bytes_checked").to_number<std::uint64_t>(), 0u);
    // The bulk data's sender: the server for Reads.
    const char* sender = type == "read_bw" ? "b.rnic" : "a.rnic";
    const auto& toe = v.at("modules").at(sender).at("toe").as_object();
    EXPECT_GT(toe.at("tx_refetched_from_host_bytes").to_number<std::uint64_t>(), 0u);
    EXPECT_EQ(toe.at("tx_refetch_mismatches").to_number<std::uint64_t>(), 0u);
    EXPECT_EQ(toe.if_contains("tx_refetch_failures"), nullptr) << "a frame the framing could not re-frame";
    for (const char* host : {"a.rnic", "b.rnic"}) {
        EXPECT_EQ(v.at("modules").at(host).at("framer").at("crc_errors").to_number<std::uint64_t>(), 0u) << host;
        EXPECT_EQ(v.at("modules").at(host).at("framer").at("framing_errors").to_number<std::uint64_t>(), 0u) << host;
    }
}

}  // namespace rnic::test
