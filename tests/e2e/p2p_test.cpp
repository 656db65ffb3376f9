// MPA revision 2's peer-to-peer model end to end (RFC 6581 §9.2) and the responder's wait for the
// initiator's first FPDU (RFC 5044 §7.1.2 rule 4), through rnic-sim's probes:
//  - peer_to_peer: the client connects asking for an explicit RTR; the server's Send, posted right
//    after accept, reaches the silent client. On the wire: the RFC 6581 word with A, C and D, and a
//    zero-length RDMA Write (STag 1) or zero-length Read as the initiator's first FPDU.
//  - two NICs with no RTR option in common: the initiator's Terminate LLP/MPA code 7.
//  - responder_waits: client-server model; the server's Send leaves only after the client's first FPDU;
//    held_close: a server that closes while held flushes its Send.
//  - RFC 6581 §9.1 limits: the Request within the device's IRD; a negotiated ORD of 0 honoured.
#include <gtest/gtest.h>

#include <sstream>

#include "run_helpers.h"

namespace rnic::test {
namespace {

struct p2p_run {
    sim_run r;
    boost::json::value results;
    std::string pcap;
};

p2p_run run_probe(const std::string& name, const std::string& probe, std::vector<std::string> extra) {
    p2p_run p;
    p.pcap = temp_path(name + ".pcap");
    const std::string results = temp_path(name + ".json");
    std::vector<std::string> args = {"--set",     "rnic.mpa.revision=2",
                                     "--set",     "workload.type=probe",
                                     "--set",     "workload.probe=" + probe,
                                     "--pcap",    p.pcap,
                                     "--results", results,
                                     "--log",     "info"};
    args.insert(args.end(), extra.begin(), extra.end());
    p.r = run_sim(args);
    p.results = read_json(results);
    return p;
}

std::uint64_t rdma_counter(const boost::json::value& v, const char* host, const char* name) {
    return v.at("modules").at(std::string(host) + ".rnic").at("rdma").at(name).to_number<std::uint64_t>();
}

void expect_rows_ok(const boost::json::value& v, std::size_t at_least) {
    std::size_t n = 0;
    for (const auto& row : v.at("workload").at("rows").as_array()) {
        EXPECT_TRUE(row.at("integrity_ok").as_bool()) << boost::json::serialize(row);
        ++n;
    }
    EXPECT_GE(n, at_least);
}

// Tab-separated fields of one tshark line.
std::vector<std::string> fields(const std::string& line) {
    std::vector<std::string> out;
    std::istringstream in(line);
    for (std::string f; std::getline(in, f, '\t');) out.push_back(f);
    return out;
}

TEST(PeerToPeer, ServerSendsFirstAfterAZeroLengthWriteRtr) {
    const p2p_run p = run_probe("p2p-write", "peer_to_peer", {});
    ASSERT_EQ(p.r.exit_code, 0) << p.r.output;
    EXPECT_EQ(p.results.at("status").as_string(), "ok");
    expect_rows_ok(p.results, 4);
    EXPECT_EQ(rdma_counter(p.results, "a", "rtrs_sent"), 1u);
    EXPECT_EQ(rdma_counter(p.results, "b", "rtrs_sent"), 0u);
    // The server had its Send queued before the RTR arrived.
    EXPECT_EQ(rdma_counter(p.results, "b", "streams_held_for_first_fpdu"), 1u);
    EXPECT_NE(p.r.output.find("peer-to-peer, RTR is a zero-length RDMA Write"), std::string::npos) << p.r.output;
    if (!have_tshark()) GTEST_SKIP() << "tshark not installed";
    // RFC 6581 §9: Request A|IRD 16, C|D|ORD 16; the Reply grants both options.
    const auto rr = lines(tshark(p.pcap, "iwarp_mpa.pdlength", "-e ip.src -e iwarp_mpa.privatedata"));
    ASSERT_EQ(rr.size(), 2u);
    EXPECT_EQ(rr[0], "10.0.0.1\t8010c010");
    EXPECT_EQ(rr[1], "10.0.0.2\t8010c010");
    // The initiator's first FPDU: a tagged RDMA Write, STag 1, no payload (ULPDU = the 14-byte header).
    const auto fpdus = lines(tshark(p.pcap, "iwarp_rdma.opcode",
                                    "-e ip.src -e iwarp_rdma.opcode -e iwarp_ddp.stag -e iwarp_mpa.ulpdulength"));
    ASSERT_FALSE(fpdus.empty());
    const auto first = fields(fpdus[0]);
    ASSERT_EQ(first.size(), 4u) << fpdus[0];
    EXPECT_EQ(first[0], "10.0.0.1");
    EXPECT_EQ(first[1], "0x00");
    EXPECT_EQ(first[2], "0x00000001");
    EXPECT_EQ(first[3], "14");
    // The server's Send (opcode 3) is the next FPDU, and nothing else precedes it from the client.
    ASSERT_GE(fpdus.size(), 2u);
    const auto second = fields(fpdus[1]);
    EXPECT_EQ(second[0], "10.0.0.2");
    EXPECT_EQ(second[1], "0x03");
}

TEST(PeerToPeer, ZeroLengthReadRtrIsAnsweredWithAZeroLengthResponse) {
    const p2p_run p = run_probe("p2p-read", "peer_to_peer", {"--set", "rnic.mpa.rtr=read"});
    ASSERT_EQ(p.r.exit_code, 0) << p.r.output;
    EXPECT_EQ(p.results.at("status").as_string(), "ok");
    expect_rows_ok(p.results, 4);
    EXPECT_EQ(rdma_counter(p.results, "a", "rtrs_sent"), 1u);
    // The Read RTR was answered, and made no completion (the probe checks the client's CQ).
    EXPECT_EQ(rdma_counter(p.results, "b", "read_responses_sent"), 1u);
    if (!have_tshark()) GTEST_SKIP() << "tshark not installed";
    const auto rr = lines(tshark(p.pcap, "iwarp_mpa.pdlength", "-e ip.src -e iwarp_mpa.privatedata"));
    ASSERT_EQ(rr.size(), 2u);
    EXPECT_EQ(rr[0], "10.0.0.1\t80104010");  // A, D only
    EXPECT_EQ(rr[1], "10.0.0.2\t80104010");
    const auto fpdus = lines(tshark(p.pcap, "iwarp_rdma.opcode",
                                    "-e ip.src -e iwarp_rdma.opcode -e iwarp_rdma.rdmardsz -e iwarp_mpa.ulpdulength"));
    ASSERT_GE(fpdus.size(), 3u);
    const auto req = fields(fpdus[0]);
    EXPECT_EQ(req[0], "10.0.0.1");
    EXPECT_EQ(req[1], "0x01");  // Read Request
    EXPECT_EQ(req[2], "0");     // of size 0
    const auto resp = fields(fpdus[1]);
    EXPECT_EQ(resp[0], "10.0.0.2");
    EXPECT_EQ(resp[1], "0x02");  // Read Response
    EXPECT_EQ(resp[3], "14");    // no payload
}

TEST(PeerToPeer, NoRtrOptionInCommonEndsWithTerminateCodeSeven) {
    const p2p_run p =
        run_probe("p2p-mismatch", "peer_to_peer", {"--set", "hosts.0.mpa_rtr=write", "--set", "hosts.1.mpa_rtr=read"});
    EXPECT_EQ(p.r.exit_code, 1) << p.r.output;
    EXPECT_NE(p.r.output.find("no RTR option in common: the responder accepts read, this device sends write"),
              std::string::npos)
        << p.r.output;
    EXPECT_NE(p.r.output.find("MPA negotiation failed"), std::string::npos) << p.r.output;
    const auto& cp_a = p.results.at("modules").at("a.rnic").at("cp").as_object();
    EXPECT_EQ(cp_a.at("connections_failed").to_number<std::uint64_t>(), 1u);
    EXPECT_EQ(rdma_counter(p.results, "a", "rtrs_sent"), 0u);
    if (!have_tshark()) GTEST_SKIP() << "tshark not installed";
    // The initiator's only FPDU is the Terminate: layer LLP (2), type MPA (0), code 7 (RFC 6581 §8).
    const auto fpdus = lines(tshark(p.pcap, "ip.src == 10.0.0.1 && iwarp_rdma.opcode",
                                    "-e iwarp_rdma.opcode -e iwarp_rdma.term_layer -e iwarp_rdma.term_etype_llp "
                                    "-e iwarp_rdma.term_errcode_llp"));
    ASSERT_EQ(fpdus.size(), 1u);
    const auto t = fields(fpdus[0]);
    ASSERT_EQ(t.size(), 4u) << fpdus[0];
    EXPECT_EQ(t[0], "0x07");
    EXPECT_EQ(t[1], "0x02");
    EXPECT_EQ(t[2], "0x00");
    EXPECT_EQ(t[3], "0x07");
    // And nothing from the server, which never saw an RTR.
    EXPECT_TRUE(lines(tshark(p.pcap, "ip.src == 10.0.0.2 && iwarp_rdma.opcode", "-e frame.number")).empty());
}

TEST(PeerToPeer, ResponderSendsNothingBeforeTheInitiatorsFirstFpdu) {
    // Client-server (no peer-to-peer): the same server-first application only gets its message out
    // once the client's first FPDU (a Write, here) has arrived.
    const p2p_run p = run_probe("responder-waits", "responder_waits", {});
    ASSERT_EQ(p.r.exit_code, 0) << p.r.output;
    EXPECT_EQ(p.results.at("status").as_string(), "ok");
    expect_rows_ok(p.results, 6);
    EXPECT_EQ(rdma_counter(p.results, "a", "rtrs_sent"), 0u);
    EXPECT_EQ(rdma_counter(p.results, "b", "streams_held_for_first_fpdu"), 1u);
    if (!have_tshark()) GTEST_SKIP() << "tshark not installed";
    const auto fpdus = lines(tshark(p.pcap, "iwarp_rdma.opcode", "-e ip.src -e iwarp_rdma.opcode"));
    ASSERT_GE(fpdus.size(), 2u);
    EXPECT_EQ(fields(fpdus[0])[0], "10.0.0.1");  // the client's Write comes first on the wire
    EXPECT_EQ(fields(fpdus[0])[1], "0x00");
}

TEST(PeerToPeer, ResponderClosingBeforeTheFirstFpduFlushesItsHeldWork) {
    // The server's Send waits for the client's first FPDU, which never comes; the server closes
    // gracefully: the Send completes flushed, its QP goes Idle, nothing of it reaches the wire.
    const p2p_run p = run_probe("held-close", "held_close", {});
    ASSERT_EQ(p.r.exit_code, 0) << p.r.output;
    EXPECT_EQ(p.results.at("status").as_string(), "ok");
    expect_rows_ok(p.results, 6);
    if (!have_tshark()) GTEST_SKIP() << "tshark not installed";
    EXPECT_TRUE(lines(tshark(p.pcap, "iwarp_rdma.opcode", "-e ip.src")).empty());
    const auto fins = lines(tshark(p.pcap, "tcp.flags.fin == 1", "-e ip.src"));
    ASSERT_FALSE(fins.empty());
    EXPECT_EQ(fins[0], "10.0.0.2");
}

TEST(PeerToPeer, RequestOffersAtMostTheDevicesIrdAndConnects) {
    // rnic.rdma.ird = 8 below rnic.mpa.ird = 16: the Request offers 8 (RFC 6581 §9.1, what the
    // initiator can hold), so a responder taking the whole offer leaves nothing to refuse.
    const std::string pcap = temp_path("ird8.pcap");
    const sim_run r =
        run_sim({"--set", "rnic.mpa.revision=2", "--set", "rnic.rdma.ird=8", "--set", "workload.type=read_lat", "--set",
                 "workload.sizes=[8]", "--set", "workload.iterations=20", "--pcap", pcap});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output.find("Terminate"), std::string::npos) << r.output;
    if (!have_tshark()) GTEST_SKIP() << "tshark not installed";
    const auto rr = lines(tshark(pcap, "iwarp_mpa.pdlength", "-e ip.src -e iwarp_mpa.privatedata"));
    ASSERT_EQ(rr.size(), 2u);
    EXPECT_EQ(rr[0], "10.0.0.1\t00080010");  // IRD 8, ORD 16
    EXPECT_EQ(rr[1], "10.0.0.2\t00080008");  // responder IRD min(16, its 8), ORD 8
}

TEST(PeerToPeer, ReadRtrGoesOutUnderANegotiatedOrdOfZeroAndReadsAreRefused) {
    // The initiator wants no Reads (ORD 0); the responder offers IRD 1 for the Read RTR (RFC 6581
    // §9.1). The RTR goes out; later Read work requests complete with "bad opcode" (no ORD), they
    // are not sent into the peer's IRD of 1.
    const std::vector<std::string> p2p = {"--set", "rnic.mpa.revision=2",
                                          "--set", "rnic.mpa.ord=0",
                                          "--set", "rnic.mpa.peer_to_peer=true",
                                          "--set", "rnic.mpa.rtr=read",
                                          "--set", "workload.sizes=[8]",
                                          "--set", "workload.iterations=20",
                                          "--log", "warn"};
    std::vector<std::string> writes = p2p;
    writes.insert(writes.end(), {"--set", "workload.type=write_lat"});
    const sim_run w = run_sim(writes);
    EXPECT_EQ(w.exit_code, 0) << w.output;
    std::vector<std::string> reads = p2p;
    reads.insert(reads.end(), {"--set", "workload.type=read_lat"});
    const sim_run r = run_sim(reads);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("the QP's ORD is 0: no RDMA Reads or atomics on this stream"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("completion with status bad opcode"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("Terminate"), std::string::npos) << r.output;
}

TEST(PeerToPeer, AskingForItUnderRevisionOneIsRefused) {
    // In the scenario: refused before simulating, naming the key and the fix.
    const sim_run bad = run_sim({"--set", "rnic.mpa.peer_to_peer=true"});
    EXPECT_EQ(bad.exit_code, 2) << bad.output;
    EXPECT_NE(bad.output.find("rnic.mpa.peer_to_peer"), std::string::npos) << bad.output;
    EXPECT_NE(bad.output.find("set rnic.mpa.revision to 2"), std::string::npos) << bad.output;
    // Per connection, from the driver: connect returns an error, the firmware says why.
    const sim_run r =
        run_sim({"--set", "workload.type=probe", "--set", "workload.probe=peer_to_peer", "--log", "warn"});
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("connect asks for peer-to-peer, which needs MPA revision 2"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("client connect (peer-to-peer) failed"), std::string::npos) << r.output;
}

// Every workload, with every connection asking for the peer-to-peer model: the RTR goes first, the
// responders wait for it, and the workloads' own data checks pass.
class PeerToPeerWorkload : public ::testing::TestWithParam<const char*> {};

TEST_P(PeerToPeerWorkload, RunsCleanWithAnRtrOnEveryConnection) {
    const std::string type = GetParam();
    const std::string results = temp_path("p2p-wl-" + type + ".json");
    std::vector<std::string> args = {"--set", "rnic.mpa.revision=2",      "--set",     "rnic.mpa.peer_to_peer=true",
                                     "--set", "workload.type=" + type,    "--set",     "workload.iterations=200",
                                     "--set", "workload.sizes=[64,4096]", "--results", results};
    if (type == "trace") args.insert(args.end(), {"--set", "workload.trace=traces/ops-storage.csv"});
    const sim_run r = run_sim(args);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "ok");
    const auto established =
        v.at("modules").at("a.rnic").at("cp").at("connections_established").to_number<std::uint64_t>();
    EXPECT_GE(established, 1u);
    // One RTR per connection the client side opened.
    EXPECT_EQ(rdma_counter(v, "a", "rtrs_sent"), established);
}

INSTANTIATE_TEST_SUITE_P(Workloads, PeerToPeerWorkload,
                         ::testing::Values("write_bw", "read_bw", "send_lat", "mixed", "kv_example", "rping", "trace"));

}  // namespace
}  // namespace rnic::test
