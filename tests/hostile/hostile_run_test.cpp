// Bounded runs of the hostile peer (workload.type = hostile) through rnic-sim: in both modes host
// a's memory outside the grants is untouched, every violation draws the Terminate the RFCs
// require, the well-behaved QP completes intact, and the run ends (no hang) with status ok.
#include <gtest/gtest.h>

#include "run_helpers.h"

namespace rnic::test {
namespace {

std::uint64_t u64(const boost::json::value& v, const char* key) {
    return v.at(key).to_number<std::uint64_t>();
}

boost::json::value hostile_run(const std::string& tag, const std::vector<std::string>& extra, sim_run* r) {
    const std::string results = temp_path("hostile-" + tag + ".json");
    std::vector<std::string> args = {"--set", "workload.type=hostile", "--results", results, "--log", "off"};
    args.insert(args.end(), extra.begin(), extra.end());
    *r = run_sim(args);
    return read_json(results);
}

TEST(HostilePeer, GrammarRunKeepsEveryInvariant) {
    sim_run r;
    const boost::json::value v = hostile_run("grammar", {"--set", "workload.hostile.episodes=12", "--seed", "3"}, &r);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(v.at("status").as_string(), "ok") << r.output;
    const boost::json::value& h = v.at("hostile");
    EXPECT_EQ(u64(h, "episodes"), 12u);
    EXPECT_EQ(u64(h, "violations_sent"), 12u);
    EXPECT_GT(u64(h, "fpdus_sent"), 12u);
    EXPECT_EQ(u64(h, "bytes_outside_grants"), 0u) << boost::json::serialize(h);
    EXPECT_EQ(u64(h, "shadow_bytes"), 94208u);  // every byte of the arena: 8 regions, receives, guards
    // The driver's rings: the device wrote CQEs and command answers there, nothing else.
    EXPECT_EQ(u64(h, "ring_bytes_outside_grants"), 0u) << boost::json::serialize(h.at("findings"));
    EXPECT_GE(u64(h, "ring_bytes_written"), 12u * 32u);  // at least a CQE an episode
    EXPECT_EQ(u64(h, "device_bytes_elsewhere"), 0u);     // nor anywhere outside the arena and the rings
    EXPECT_EQ(u64(h, "answered_as_required"), 12u) << boost::json::serialize(h.at("findings"));
    EXPECT_EQ(u64(h, "answered_wrongly"), 0u);
    EXPECT_EQ(u64(h, "unanswered"), 0u);
    EXPECT_GE(h.at("classes").as_object().size(), 8u);
    EXPECT_TRUE(h.at("good_qp").at("ok").as_bool());
    EXPECT_EQ(u64(h.at("good_qp"), "operations"), 24u);
    // Host a's RNIC sent a Terminate for every violation but the peer's own Terminates.
    const auto& classes = h.at("classes").as_object();
    std::uint64_t peer_terms = 0;  // and streams the peer closed under an unfinished FPDU: no Terminate owed
    for (const char* c : {"peer_terminate", "mpa_length_beyond_stream"})
        if (classes.contains(c)) peer_terms += u64(classes.at(c), "sent");
    EXPECT_EQ(v.at("modules").at("a.rnic").at("rdma").at("terminates_sent").to_number<std::uint64_t>(),
              12u - peer_terms);
}

TEST(HostilePeer, PeerFramedStreamsKeepEveryInvariant) {
    // The peer frames its own FPDUs and cuts its streams (workload.hostile.stream = peer, the
    // default): wrong CRCs, ULPDU_Length short, long and beyond the stream, runts, ULPDUs over the
    // MULPDU, FPDUs split across segments and coalesced. Each damaged FPDU draws RFC 5044 §8's
    // answer; nothing lands outside the grants; the well-behaved QP loses nothing.
    sim_run r;
    const boost::json::value v = hostile_run("peer", {"--set", "workload.hostile.episodes=150", "--seed", "4"}, &r);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(v.at("status").as_string(), "ok") << r.output;
    const boost::json::value& h = v.at("hostile");
    EXPECT_EQ(u64(h, "answered_as_required"), 150u) << boost::json::serialize(h.at("findings"));
    EXPECT_EQ(u64(h, "bytes_outside_grants"), 0u);
    EXPECT_EQ(u64(h, "ring_bytes_outside_grants"), 0u);
    EXPECT_TRUE(h.at("good_qp").at("ok").as_bool());
    const auto& classes = h.at("classes").as_object();
    for (const char* c :
         {"mpa_bad_crc", "mpa_length_short", "mpa_length_overrun", "mpa_length_beyond_stream", "mpa_ulpdu_runt"}) {
        ASSERT_TRUE(classes.contains(c)) << c << " not drawn in 150 episodes";
        EXPECT_GT(u64(classes.at(c), "sent"), 0u) << c;
        EXPECT_EQ(u64(classes.at(c), "as_required"), u64(classes.at(c), "sent")) << c;
    }
    const boost::json::value& st = h.at("stream");
    EXPECT_EQ(st.at("framed_by").as_string(), "peer");
    EXPECT_GT(u64(st, "fpdus_split"), 50u);
    EXPECT_GT(u64(st, "segments_coalesced"), 10u);
    EXPECT_GT(u64(st, "ulpdus_over_mulpdu"), 5u);
    for (const char* cut : {"aligned", "split", "coalesced", "random"}) EXPECT_GT(u64(st.at("cuts"), cut), 0u) << cut;
    // Host a's MPA receiver saw the CRC errors (one a bad-CRC, short or overrun episode) and
    // reported each with an LLP Terminate of code 2.
    const std::uint64_t crc_classes = u64(classes.at("mpa_bad_crc"), "sent") +
                                      u64(classes.at("mpa_length_short"), "sent") +
                                      u64(classes.at("mpa_length_overrun"), "sent");
    EXPECT_EQ(u64(v.at("modules").at("a.rnic").at("framer"), "crc_errors"), crc_classes);
    EXPECT_EQ(u64(h.at("outcomes"), "Terminate sent llp/0/0x02"), crc_classes);
    // Each segment the peer cut is one work request of its own on host b's NIC (those still queued
    // when host a's Terminate arrived are flushed, not sent).
    const std::uint64_t writes = u64(v.at("modules").at("b.rnic").at("rdma"), "raw_stream_writes");
    EXPECT_LE(writes, u64(st, "segments"));
    EXPECT_GT(writes * 10, u64(st, "segments") * 9);
}

TEST(HostilePeer, PeerFramingNeedsMpaWithoutMarkers) {
    for (const std::string bad : {"rnic.mpa.markers=true", "rnic.framing=ift"}) {
        const sim_run r = run_sim({"--set", "workload.type=hostile", "--set", bad});
        EXPECT_EQ(r.exit_code, 2) << bad << "\n" << r.output;
        EXPECT_NE(r.output.find("workload.hostile.stream"), std::string::npos) << r.output;
    }
    sim_run r;
    const boost::json::value v = hostile_run("nic-markers",
                                             {"--set", "rnic.mpa.markers=true", "--set", "workload.hostile.stream=nic",
                                              "--set", "workload.hostile.episodes=10", "--seed", "2"},
                                             &r);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_FALSE(v.at("hostile").as_object().contains("stream"));
}

TEST(HostilePeer, MutateRunKeepsEveryInvariant) {
    sim_run r;
    const boost::json::value v = hostile_run(
        "mutate", {"--set", "workload.hostile.mode=mutate", "--set", "workload.hostile.episodes=12", "--seed", "5"},
        &r);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(v.at("status").as_string(), "ok") << r.output;
    const boost::json::value& h = v.at("hostile");
    EXPECT_EQ(h.at("mode").as_string(), "mutate");
    EXPECT_EQ(u64(h, "episodes"), 12u);
    EXPECT_EQ(u64(h, "bytes_outside_grants"), 0u) << boost::json::serialize(h);
    EXPECT_EQ(u64(h, "unanswered"), 0u);
    EXPECT_TRUE(h.at("good_qp").at("ok").as_bool());
    // Damage to the headers draws Terminates of several kinds.
    EXPECT_GE(h.at("outcomes").as_object().size(), 3u) << boost::json::serialize(h.at("outcomes"));
}

TEST(HostilePeer, SameSeedSameResults) {
    sim_run r1, r2;
    const boost::json::value a = hostile_run("seed-a", {"--set", "workload.hostile.episodes=20", "--seed", "9"}, &r1);
    const boost::json::value b = hostile_run("seed-b", {"--set", "workload.hostile.episodes=20", "--seed", "9"}, &r2);
    EXPECT_EQ(boost::json::serialize(a.at("hostile")), boost::json::serialize(b.at("hostile")));
    EXPECT_EQ(a.at("simulated_time_ps"), b.at("simulated_time_ps"));
}

TEST(HostilePeer, LongRunReusesConnectionsAndDriverMemory) {
    // 400 episodes: 401 connections on each NIC, far more than its 16 send regions (4 MiB of buffer
    // memory, 256 KiB each) or a bump allocator's rings would allow. Closed connections are freed
    // once their QPs are destroyed, and their ids, regions and ring memory serve the next ones.
    sim_run r;
    const boost::json::value v = hostile_run("long", {"--set", "workload.hostile.episodes=400", "--seed", "6"}, &r);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(v.at("status").as_string(), "ok") << r.output;
    const boost::json::value& h = v.at("hostile");
    EXPECT_EQ(u64(h, "episodes"), 400u);
    EXPECT_EQ(u64(h, "answered_as_required"), 400u) << boost::json::serialize(h.at("findings"));
    EXPECT_EQ(u64(h, "bytes_outside_grants"), 0u);
    EXPECT_TRUE(h.at("good_qp").at("ok").as_bool());
    for (const char* nic : {"a.rnic", "b.rnic"}) {
        const boost::json::value& toe = v.at("modules").at(nic).at("toe");
        EXPECT_EQ(u64(toe, "connections_opened"), 401u) << nic;
        EXPECT_GE(u64(toe, "connections_freed"), 380u) << nic;  // the last few may be in TIME-WAIT
        std::uint64_t highest_id = 0;
        for (const auto& c : toe.at("connections").as_array()) highest_id = std::max(highest_id, u64(c, "id"));
        EXPECT_LT(highest_id, 16u) << nic;  // ids are table slots, reused
        // The results list the first 256 freed connections and every live one; the rest are counted.
        const std::uint64_t freed = u64(toe, "connections_freed");
        EXPECT_EQ(u64(toe, "connections_closed_not_listed"), freed - 256u) << nic;
        EXPECT_EQ(toe.at("connections").as_array().size(), 256u + (401u - freed)) << nic;
        // Nothing leaks: only the well-behaved QP is left, and buffer memory holds send regions
        // for the live connections only (256 KiB each).
        const boost::json::value& rnic = v.at("modules").at(nic);
        EXPECT_EQ(rnic.at("rdma").at("qps").as_array().size(), 1u) << nic;
        EXPECT_EQ(u64(rnic.at("buffer"), "tx_regions_bytes"), (401u - freed) * 256u * 1024u) << nic;
    }
    for (const char* mem : {"a.mem", "b.mem"}) EXPECT_EQ(u64(v.at("modules").at(mem), "dma_refused"), 0u) << mem;
}

TEST(HostilePeer, ThousandsOfConnectDisconnectCyclesLeaveNothingBehind) {
    // Issue 19 point 3: every hostile episode is a connect/disconnect cycle (a QP created,
    // connected, failed or closed, destroyed). After 2,000 of them each RNIC holds what it held
    // after one: the same QPs, CQs and STags, one TCP connection and one buffer region for the
    // well-behaved QP, plus only the connections still in TIME-WAIT (RFC 793's 2MSL, each keeping
    // its send region until then).
    const std::vector<std::string> common = {"--set", "simulation.live_objects=true", "--seed", "5"};
    auto run = [&](const char* tag, const char* episodes) {
        std::vector<std::string> a = common;
        a.insert(a.end(), {"--set", std::string("workload.hostile.episodes=") + episodes});
        sim_run r;
        boost::json::value v = hostile_run(tag, a, &r);
        EXPECT_EQ(r.exit_code, 0) << r.output;
        return v;
    };
    const boost::json::value one = run("live-1", "1"), many = run("live-2000", "2000");
    EXPECT_EQ(u64(many.at("modules").at("a.rnic").at("toe"), "connections_opened"), 2001u);
    for (const char* nic : {"a.rnic", "b.rnic"}) {
        const boost::json::value& base = one.at("live_objects").at(nic);
        const boost::json::value& end = many.at("live_objects").at(nic);
        for (const char* k : {"qps", "cqs", "stags"}) EXPECT_EQ(u64(end, k), u64(base, k)) << nic << " " << k;
        EXPECT_EQ(u64(end, "qps"), 1u) << nic;  // the well-behaved QP
        const std::uint64_t tw = u64(end, "tcp_connections_time_wait");
        EXPECT_EQ(u64(end, "tcp_connections") - tw,
                  u64(base, "tcp_connections") - u64(base, "tcp_connections_time_wait"))
            << nic;
        EXPECT_EQ(u64(end, "tcp_connections") - tw, 1u) << nic;
        EXPECT_EQ(u64(end, "buffer_regions"), u64(end, "tcp_connections")) << nic;  // one send region each
        EXPECT_LE(tw, 16u) << nic << ": only the last 2MSL's connections may wait";
    }
    // Without the key the results carry no such section (results files stay as they were).
    sim_run r;
    const boost::json::value plain = hostile_run("live-off", {"--set", "workload.hostile.episodes=1"}, &r);
    EXPECT_FALSE(plain.as_object().contains("live_objects"));
}

TEST(HostilePeer, BadScenarioValuesAreRefusedByName) {
    for (const std::string bad : {"workload.hostile.mode=fuzz", "workload.hostile.episodes=0",
                                  "workload.hostile.max_payload=4KiB", "workload.hostile.answer_timeout=0ns"}) {
        const sim_run r = run_sim({"--set", "workload.type=hostile", "--set", bad});
        EXPECT_EQ(r.exit_code, 2) << bad << "\n" << r.output;
        EXPECT_NE(r.output.find(bad.substr(0, bad.find('='))), std::string::npos) << r.output;
    }
}

TEST(HostilePeer, HelpScenarioListsTheKeys) {
    const sim_run r = run_sim({"--help-scenario"});
    for (const char* key :
         {"workload.hostile.mode", "workload.hostile.episodes", "workload.hostile.max_good",
          "workload.hostile.max_payload", "workload.hostile.answer_timeout", "workload.hostile.stream"})
        EXPECT_NE(r.output.find(key), std::string::npos) << key;
}

}  // namespace
}  // namespace rnic::test
