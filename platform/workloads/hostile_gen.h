// The hostile peer's FPDU generator (workload.type = hostile): plain C++, no simulator. It knows
// what the target advertised (regions of every kind, receives posted, IRD) and produces, per
// stream, a few well-formed ULPDUs followed by one that breaks a rule of RFC 5040, RFC 5041 or
// RFC 7306, drawn from a grammar of DDP/RDMAP headers with random and boundary values. Each ULPDU
// carries the answer the target owes it: nothing, or a Terminate with the layer, error type and
// code the RFCs name. ULPDUs are built with the project's codecs (proto/ddp_rdmap.h); the NIC of
// the hostile host frames them (MPA, CRC) as raw-ULPDU work requests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace rnic::platform::attack {

// One region as the peer knows it: STag, first tagged offset, length.
struct region {
    std::uint32_t stag = 0;
    std::uint64_t to = 0;
    std::uint64_t length = 0;
};

// What the target advertised (or let slip) to the peer.
struct target {
    region writable;                         // remote write + read, the peer's to write
    region atomic;                           // remote atomic + write + read
    region read_only;                        // remote read only
    region no_remote;                        // registered without remote rights
    region other_pd;                         // another protection domain (the well-behaved QP's)
    region stale;                            // deregistered before the peer started
    region invalidated;                      // invalidated locally before the peer started
    std::uint32_t receives = 8;              // posted on each hostile stream before it connects
    std::uint32_t recv_len = 256;            // bytes each
    std::uint32_t ird = 4;                   // inbound Read/Atomic Requests the target accepts at once
    std::size_t max_payload = 1024;          // payload bytes per ULPDU the peer's NIC can frame
    std::uint64_t send_buffer = 256 * 1024;  // the target's TCP send stream: Read Responses it absorbs
    std::size_t max_fpdus = 64;              // ULPDUs the peer can post in one episode
    // The peer frames its FPDUs itself (workload.hostile.stream = peer, MPA without markers): then
    // the grammar also damages the framing (CRC, ULPDU_Length) and cuts the TCP stream anywhere.
    bool peer_frames = false;
    bool crc = true;                // the CRC was negotiated (else the CRC field is zero)
    std::size_t mulpdu = 1024;      // the peer's MULPDU (RFC 5044 §4.5): good Writes go beyond it too
    std::size_t max_segments = 64;  // TCP segments (work requests) the peer can post in one episode
};

// The answer a ULPDU is owed.
struct expectation {
    enum class kind { none, terminate, peer_terminate, unknown, closed };
    kind what = kind::none;
    std::uint8_t layer = 0, etype = 0, code = 0;  // RFC 5040 §4.8 Terminate control
};

// What the peer does to an FPDU's framing (peer framing only; RFC 5044 §4.1, §8).
enum class damage : std::uint8_t {
    none,
    bad_crc,         // the CRC field does not match the FPDU
    length_short,    // ULPDU_Length smaller than the ULPDU sent
    length_overrun,  // ULPDU_Length larger than the ULPDU; more bytes follow (the receiver reads into them)
    length_beyond,   // ULPDU_Length larger than everything the peer sends; then the peer closes
};

struct fpdu {
    std::vector<std::uint8_t> ulpdu;
    std::string cls;  // "good_write", "write_invalid_stag", ... (classes())
    expectation expect;
    enum damage damage = damage::none;
};

// An episode's TCP stream as a peer that frames its own FPDUs sends it: the bytes, and where each
// TCP segment ends (each a work request of its own: one segment on the wire, MSS permitting).
struct stream_plan {
    std::vector<std::uint8_t> bytes;
    std::vector<std::size_t> ends;         // ascending, the last is bytes.size()
    std::string cut;                       // aligned | split | coalesced | random
    std::uint64_t fpdus_split = 0;         // FPDUs that span two segments or more
    std::uint64_t segments_coalesced = 0;  // segments that carry the starts of two FPDUs or more
    bool close_after = false;              // the peer closes the connection once the bytes are sent
};

// "layer/etype/code" as results and logs show it, e.g. "ddp/1/0x00".
std::string term_text(std::uint8_t layer, std::uint8_t etype, std::uint8_t code);

class generator {
public:
    generator(const target& t, std::uint64_t seed);

    // One stream: 0..max_good good ULPDUs, then one violation (the last element).
    std::vector<fpdu> episode(std::size_t max_good);
    // A good stream of `n` ULPDUs (the recorded conversation the mutate mode damages).
    std::vector<fpdu> good_conversation(std::size_t n);
    // Damages one byte of one ULPDU of `conv` (a copy): a new value, a bit flip or a boundary value.
    std::vector<fpdu> mutate(const std::vector<fpdu>& conv);
    // Frames `episode` as the peer (MPA without markers, RFC 5044 §4), applies each FPDU's damage
    // and cuts the stream into TCP segments in one of the ways TCP allows (drawn): at every FPDU
    // end, inside FPDUs, several FPDUs in one segment, or at random bytes.
    stream_plan frame_stream(const std::vector<fpdu>& episode);

    // Every violation class the generator draws from.
    static const std::vector<std::string>& classes();
    // mpa_length_beyond_stream: the ULPDU lengths [first, last] an FPDU carrying `n` bytes may declare
    // so that the frame they announce (length field, ULPDU, pad to 4, CRC: RFC 5044 §4) ends past the
    // bytes sent. A length whose pad brings the frame back to the size sent makes a whole FPDU with a
    // wrong CRC instead (found by the 10-million-FPDU run: episode 1172096 of seed 1).
    static std::pair<std::size_t, std::size_t> lengths_beyond_the_stream(std::size_t n);
    std::mt19937_64& rng() { return rng_; }

private:
    struct stream {
        std::uint32_t send_msn = 1;  // next MSN on queue 0
        std::uint32_t req_msn = 1;   // next MSN on queue 1
        std::uint32_t receives_left = 0;
        std::uint32_t requests = 0;  // good Read/Atomic Requests sent
    };
    void new_stream();
    fpdu good();
    fpdu violation(const std::string& cls);
    std::uint64_t pick(std::uint64_t lo, std::uint64_t hi);  // uniform in [lo, hi]
    std::size_t payload_len();                               // 0, 1, odd, even, the maximum
    std::vector<std::uint8_t> bytes(std::size_t n);
    std::uint32_t bogus_stag();
    fpdu tagged(const std::string& cls, std::uint32_t stag, std::uint64_t to, std::size_t len);
    fpdu untagged(const std::string& cls, std::uint8_t opcode, std::uint32_t queue, std::uint32_t msn, std::uint32_t mo,
                  const std::vector<std::uint8_t>& body, std::uint32_t inv = 0);
    fpdu read_request(const std::string& cls, std::uint32_t stag, std::uint64_t to, std::uint32_t size,
                      std::uint32_t queue, std::uint32_t msn);
    fpdu atomic_request(const std::string& cls, std::uint8_t aop, std::uint32_t stag, std::uint64_t to,
                        std::uint32_t msn);

    target t_;
    std::mt19937_64 rng_;
    stream s_;
};

}  // namespace rnic::platform::attack
