// Ready-made captures for the tools tests, each with what was written into it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "capture_builder.h"

namespace rnic::tools_test {

// What one connection of a scenario carries, per sending side (kInitiator / kResponder).
struct written_connection {
    std::uint16_t initiator_port = 40000, responder_port = 5201;
    std::array<std::vector<std::uint8_t>, 2> opcodes;  // opcode of every FPDU written, in order
    std::array<bool, 2> markers{};
    bool crc = true;
    std::uint8_t revision = 1;
    std::size_t marker_boundary_segments = 0;
    std::size_t fpdus() const { return opcodes[0].size() + opcodes[1].size(); }
};

struct scenario {
    std::string name;
    tools_test::capture capture;
    std::vector<written_connection> connections;
    std::size_t fpdus() const;
};

// Revision 1, no Markers, CRC: FPDUs of every opcode (Write, Read Request/Response, the four
// Sends, Terminate, both Immediate Data, Atomic Request FetchAdd and CmpSwap, Atomic Response),
// multi-segment messages, several FPDUs per TCP segment and FPDUs split across segments.
scenario all_opcodes_rev1();
// RFC 6581 revision 2: S flag, IRD/ORD, peer-to-peer with a zero-length Send RTR first.
scenario enhanced_rev2();
// Markers both ways, CRC, one FPDU per segment, every FPDU < 512 bytes; the first FPDUs are the
// RFC 5044 Fig. 5 (leading Marker) and Fig. 6 (Marker inside the FPDU) examples.
scenario markers_both_ways();
// An RDMA Write the responder answers with a Terminate (layer RDMA, remote protection, invalid
// STag, with the terminated DDP header), then both sides close.
scenario terminate_after_write();
// The four scenarios above one after the other in one capture (initiator ports 40000-40003).
scenario everything();
// Two connections (initiator ports 40000 and 40001) whose frames interleave.
scenario two_connections();

// Checker-only scenarios (tshark would not follow them).
// Retransmissions, duplicates, an out-of-order segment, a partial overlap and a segment with a
// bad TCP checksum that is retransmitted correctly.
scenario tcp_disorder();
// Markers one way only (Request M = 1, Reply M = 0), FPDUs of random sizes up to 3000 bytes,
// several per segment, segments of random sizes, and the sequence numbers wrapping around 2^32.
scenario markers_random(std::uint64_t seed);
// No TCP handshake in the capture and CRC off on both sides.
scenario no_handshake_no_crc();

}  // namespace rnic::tools_test
