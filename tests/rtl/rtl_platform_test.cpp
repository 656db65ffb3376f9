// The RTL-backed platform against the TLM one: the same scenario run with rnic.mpa.model tlm and
// rtl must put the same bytes on the wire, at the same times (byte-identical pcaps), and deliver
// the same results; and the RTL run can write a VCD of its datapath.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "../e2e/run_helpers.h"

namespace {

using namespace rnic::test;

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

const boost::json::object& framer(const boost::json::value& results, const std::string& host) {
    return results.at("modules").at(host + ".rnic").at("framer").as_object();
}

// Runs `args` with both datapaths; the captures must be identical and the runs must agree.
void expect_same_wire(const std::string& name, const std::vector<std::string>& args, bool expect_ooo = false) {
    const std::string tlm_pcap = temp_path(name + "-tlm.pcap"), rtl_pcap = temp_path(name + "-rtl.pcap");
    const std::string tlm_json = temp_path(name + "-tlm.json"), rtl_json = temp_path(name + "-rtl.json");
    const sim_run tlm = run_sim(with(args, {"--set", "rnic.mpa.model=tlm", "--pcap", tlm_pcap, "--results", tlm_json}));
    const sim_run rtl = run_sim(with(args, {"--set", "rnic.mpa.model=rtl", "--pcap", rtl_pcap, "--results", rtl_json}));
    ASSERT_EQ(tlm.exit_code, 0) << tlm.output;
    ASSERT_EQ(rtl.exit_code, 0) << rtl.output;
    const std::string a = read_file(tlm_pcap), b = read_file(rtl_pcap);
    ASSERT_GT(a.size(), 100000u);
    EXPECT_TRUE(a == b) << name << ": the captures differ (" << a.size() << " vs " << b.size() << " bytes)";
    EXPECT_NE(pcap_check(rtl_pcap).find("exit=0"), std::string::npos) << pcap_check(rtl_pcap);

    const boost::json::value rt = read_json(rtl_json), tt = read_json(tlm_json);
    EXPECT_EQ(rt.at("integrity"), tt.at("integrity"));
    EXPECT_EQ(rt.at("simulated_time_ps"), tt.at("simulated_time_ps"));
    for (const char* host : {"a", "b"}) {
        const auto& r = framer(rt, host);
        const auto& t = framer(tt, host);
        EXPECT_EQ(r.at("datapath_model").as_string(), "rtl");
        EXPECT_EQ(t.at("datapath_model").as_string(), "tlm");
        for (const char* key : {"tx_fpdus", "rx_fpdus", "tx_fpdu_bytes", "crc_errors", "ooo_fpdus_placed",
                                "tx_datapath_beats", "rx_datapath_beats"}) {
            EXPECT_EQ(r.at(key), t.at(key)) << host << " " << key;
        }
        // The RTL's pipeline: 1 or 2 cycles per FPDU besides its beats.
        const auto fpdus = r.at("tx_fpdus").to_number<std::uint64_t>() + r.at("rx_fpdus").to_number<std::uint64_t>();
        const auto beats =
            r.at("tx_datapath_beats").to_number<std::uint64_t>() + r.at("rx_datapath_beats").to_number<std::uint64_t>();
        const auto latency = r.at("tx_datapath_latency_cycles").to_number<std::uint64_t>() +
                             r.at("rx_datapath_latency_cycles").to_number<std::uint64_t>();
        EXPECT_GE(latency, beats + fpdus) << host;
        EXPECT_LE(latency, beats + 2 * fpdus) << host;
    }
    // Out-of-order placement located by the Markers went through the RTL receive datapath too.
    if (expect_ooo) {
        EXPECT_GT(framer(rt, "b").at("ooo_fpdus_placed").to_number<std::uint64_t>(), 0u);
    }
    std::remove(tlm_pcap.c_str());
    std::remove(rtl_pcap.c_str());
    std::remove(tlm_json.c_str());
    std::remove(rtl_json.c_str());
}

TEST(RtlPlatform, DefaultScenarioSameWire) {
    expect_same_wire("default", quick_args());
}

TEST(RtlPlatform, SixtyFourBitDatapathSameWire) {
    expect_same_wire("w8", with(quick_args(), {"--set", "rnic.mpa.crc_bytes_per_cycle=8"}));
}

// Markers both ways and 1% loss: Marker insertion on transmit, removal and FPDUPTR checks on
// receive, and out-of-order placement located by the Markers, all through the RTL.
TEST(RtlPlatform, MarkersUnderLossSameWire) {
    expect_same_wire("markers",
                     {"--scenario", "platform/scenarios/rx-markers.json", "--set", "workload.sizes=[1024,4096,9000]",
                      "--set", "workload.iterations=40", "--log", "warn"},
                     true);
}

TEST(RtlPlatform, ReadsAndSendsSameWire) {
    expect_same_wire("read", with(quick_args(), {"--set", "workload.type=read_bw", "--set", "rnic.mpa.revision=2"}));
    expect_same_wire("send", with(quick_args(), {"--set", "workload.type=send_bw", "--set", "rnic.mpa.markers=true"}));
}

// Damage that gets past TCP is caught by the RTL's CRC check, with the same Terminate on the wire.
TEST(RtlPlatform, CorruptionCaughtByRtlCrc) {
    const std::vector<std::string> args =
        with(quick_args(), {"--set", "link.a_to_b.corrupt=0.02", "--set", "link.a_to_b.corrupt_fixes_checksum=true"});
    const std::string tlm_json = temp_path("corrupt-tlm.json"), rtl_json = temp_path("corrupt-rtl.json");
    const sim_run tlm = run_sim(with(args, {"--set", "rnic.mpa.model=tlm", "--results", tlm_json}));
    const sim_run rtl = run_sim(with(args, {"--set", "rnic.mpa.model=rtl", "--results", rtl_json}));
    EXPECT_EQ(rtl.exit_code, tlm.exit_code) << rtl.output;
    const boost::json::value rv = read_json(rtl_json), tv = read_json(tlm_json);
    const auto& r = framer(rv, "b");
    const auto& t = framer(tv, "b");
    EXPECT_GE(r.at("crc_errors").to_number<std::uint64_t>(), 1u);
    EXPECT_EQ(r.at("crc_errors"), t.at("crc_errors"));
    EXPECT_EQ(r.at("rx_fpdus"), t.at("rx_fpdus"));
}

TEST(RtlPlatform, VcdOfOneFpduOnRequest) {
    const std::string vcd = temp_path("framer-%h.vcd");
    const sim_run r = run_sim(with(quick_args(), {"--set", "rnic.mpa.model=rtl", "--set", "rnic.mpa.rtl_vcd=" + vcd}));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    for (const char* host : {"a", "b"}) {
        std::string path = vcd;
        path.replace(path.find("%h"), 2, host);
        const std::string text = read_file(path);
        ASSERT_FALSE(text.empty()) << path;
        EXPECT_NE(text.find("$enddefinitions"), std::string::npos);
        EXPECT_NE(text.find("out_data"), std::string::npos);
        EXPECT_NE(text.find("crc_calc"), std::string::npos);
        EXPECT_NE(text.find("in_ready"), std::string::npos);
        // One FPDU each way, not the whole run: a few hundred timestamps at most.
        std::size_t stamps = 0;
        for (std::size_t at = text.find("\n#"); at != std::string::npos; at = text.find("\n#", at + 1)) ++stamps;
        EXPECT_GT(stamps, 4u) << path;
        EXPECT_LT(stamps, 2000u) << path;
        std::remove(path.c_str());
    }
}

TEST(RtlPlatform, WidthWithoutRtlIsAScenarioError) {
    const sim_run r =
        run_sim(with(quick_args(), {"--set", "rnic.mpa.model=rtl", "--set", "rnic.mpa.crc_bytes_per_cycle=4"}));
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("rnic.mpa.crc_bytes_per_cycle"), std::string::npos) << r.output;
}

}  // namespace
