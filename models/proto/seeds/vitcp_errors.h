// What an error in one received VI/TCP message does to the connection, per reliability level
// (draft-dicecco-vitcp-01, seed 003). Plain C++, no SystemC: vitcp_framing and, through the
// framing interface, the RDMA engine's receive path ask it; tests/seeds/vitcp_errors_test.cpp
// checks every level against every error class.
//
// The draft names the levels (§3.3 Calling Attributes bits 0-2) and relies on the VI Architecture
// for what each does on an error, restating it only for the CRC (§3.6 option 2: "the connection
// must be closed immediately if the mode is Reliable Delivery or Reliable Reception. The
// connection may continue if in Unreliable mode"). The VI Architecture's reliability attributes
// as the platform applies them (docs/framings.md, "Reliability levels and errors"):
//  - Reliable Delivery, Reliable Reception: any error in a received message breaks the
//    connection; the VI goes to Error, the TCP connection closes (§2.2.1: closing one closes the
//    other) and every outstanding and later descriptor, on both ends, completes flushed.
//  - Unreliable Delivery: corrupt data is detected and never presented as good, but the connection
//    survives. A Send in error (a CRC error, the Transmit Error bit of §3.2) is delivered into its
//    receive descriptor, which completes with a transport error (§3.6 option 2: "Deliver the data
//    to the application with status indicating transport error"); an RdmaWrite in error is
//    dropped (no descriptor could say its data is bad); a protection error (a bad Memory Handle,
//    an address outside the region) drops the RdmaWrite; a descriptor error completes the receive
//    descriptor in error (too long) or drops the message (none posted).
//  - At every level the connection closes on: a framing error (the stream's segment boundaries
//    or message sequence can no longer be trusted), a Read beyond the negotiated RDMA Read Window
//    (§2.2.2.2.6), and any error in an RDMA Read Request or Response or a NOP. The VI
//    Architecture offers RDMA Read only on the reliable levels, so an Unreliable connection has no
//    Read machinery to keep in step after losing one.
#pragma once

#include <cstdint>

#include "proto/seeds/vitcp.h"
#include "proto/seeds/vitcp_ce.h"

namespace rnic::proto::vitcp_map {

enum class message_error : std::uint8_t {
    crc,             // §3.6: the trailer CRC does not match
    transmit_error,  // §3.2 bit 5: the sender could not resend the original data (§2.2.2.2.5)
    protection,      // an RdmaWrite's Memory Handle, rights or bounds do not check out
    descriptor,      // a Send finds no receive descriptor, or one too small
    read_limit,      // a Read Request beyond the RDMA Read Window (§2.2.2.2.6)
    framing,         // Version, Type, lengths, message order: the stream itself
};
const char* to_string(message_error e);

// Whether the connection survives `e` in a message of type `type` at `level`.
bool connection_survives(vitcp_ce::reliability level, message_error e, vitcp::segment_type type);

}  // namespace rnic::proto::vitcp_map
