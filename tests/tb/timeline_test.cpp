// The transaction timeline writer (Chrome trace-event JSON): valid JSON, tracks as process/thread
// rows, exact times, escaping, the event cap, and nothing written when it is off.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/timeline.h"

namespace rnic::test {
namespace {

boost::json::value read_json(const std::string& path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return boost::json::parse(ss.str());
}

TEST(Timeline, WritesCompleteEventsWithTracksAndExactTimes) {
    const std::string path = ::testing::TempDir() + "timeline_test.json";
    EXPECT_FALSE(timeline::enabled());
    timeline::complete_event("x/y", "ignored", 0, 1);  // off: nothing happens
    ASSERT_TRUE(timeline::open(path));
    EXPECT_TRUE(timeline::enabled());
    timeline::complete_event("a.pcie/upstream", "MWr", 1234567, 89,
                             timeline::args().add("bytes", 256).add("addr", "0x10"), "pcie");
    timeline::complete_event("a.pcie/downstream", "CplD", 2000000, 1000);
    timeline::instant_event("a.pcie/msix", "MSI-X 3", 5000000, timeline::args().add("vector", 3u));
    timeline::complete_event("b.rnic.dma/ch0", "weird \"name\"\n", 0, 0, timeline::args().add("ratio", 0.5));
    EXPECT_EQ(timeline::events_written(), 4u);
    timeline::close();
    EXPECT_FALSE(timeline::enabled());

    const boost::json::value v = read_json(path);
    EXPECT_EQ(v.at("displayTimeUnit").as_string(), "ns");
    const auto& events = v.at("traceEvents").as_array();
    int processes = 0, threads = 0, complete = 0, instant = 0, escaped = 0;
    for (const auto& e : events) {
        const auto& o = e.as_object();
        const std::string ph(o.at("ph").as_string());
        if (ph == "M" && o.at("name").as_string() == "process_name") ++processes;
        if (ph == "M" && o.at("name").as_string() == "thread_name") ++threads;
        if (ph == "X") ++complete;
        if (ph == "i") ++instant;
        if (ph == "X" && o.at("name").as_string() == "MWr") {
            // 1234567 ps = 1.234567 us, 89 ps = 0.000089 us
            EXPECT_DOUBLE_EQ(o.at("ts").to_number<double>(), 1.234567);
            EXPECT_DOUBLE_EQ(o.at("dur").to_number<double>(), 0.000089);
            EXPECT_EQ(o.at("cat").as_string(), "pcie");
            EXPECT_EQ(o.at("args").at("bytes").to_number<int>(), 256);
            EXPECT_EQ(o.at("args").at("addr").as_string(), "0x10");
        }
        if (ph == "X" && o.at("name").as_string() == "weird \"name\"\n") ++escaped;  // escaped and read back
    }
    EXPECT_EQ(processes, 2);  // a.pcie, b.rnic.dma
    EXPECT_EQ(threads, 4);
    EXPECT_EQ(complete, 3);
    EXPECT_EQ(instant, 1);
    EXPECT_EQ(escaped, 1);
    EXPECT_EQ(v.at("otherData").at("events_written").to_number<int>(), 4);
    std::remove(path.c_str());
}

TEST(Timeline, StopsAtTheEventCapAndSaysSo) {
    const std::string path = ::testing::TempDir() + "timeline_cap.json";
    ASSERT_TRUE(timeline::open(path));
    timeline::set_max_events(10);
    for (int i = 0; i < 25; ++i) timeline::complete_event("p/t", "e", static_cast<std::uint64_t>(i) * 1000, 500);
    EXPECT_EQ(timeline::events_written(), 10u);
    EXPECT_EQ(timeline::events_dropped(), 15u);
    timeline::close();
    const boost::json::value v = read_json(path);
    EXPECT_EQ(v.at("otherData").at("events_dropped").to_number<int>(), 15);
    timeline::set_max_events(2000000);
    std::remove(path.c_str());
}

TEST(Timeline, ReportsAFileItCannotOpen) {
    std::string error;
    EXPECT_FALSE(timeline::open("/nonexistent-dir/x/timeline.json", &error));
    EXPECT_NE(error.find("/nonexistent-dir/x/timeline.json"), std::string::npos);
    EXPECT_FALSE(timeline::enabled());
    EXPECT_EQ(timeline::escape("a\"b\\c\x01"), "a\\\"b\\\\c\\u0001");
}

}  // namespace
}  // namespace rnic::test
