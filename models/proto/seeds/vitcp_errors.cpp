#include "proto/seeds/vitcp_errors.h"

namespace rnic::proto::vitcp_map {

const char* to_string(message_error e) {
    switch (e) {
    case message_error::crc:
        return "CRC error";
    case message_error::transmit_error:
        return "Transmit Error bit";
    case message_error::protection:
        return "protection error";
    case message_error::descriptor:
        return "descriptor error";
    case message_error::read_limit:
        return "RDMA Read beyond the window";
    case message_error::framing:
        return "framing error";
    }
    return "?";
}

bool connection_survives(vitcp_ce::reliability level, message_error e, vitcp::segment_type type) {
    // §3.6 option 2 and the VI Architecture's reliable levels: the connection breaks.
    if (level != vitcp_ce::reliability::unreliable) return false;
    switch (e) {
    case message_error::framing:
    case message_error::read_limit:
        return false;
    case message_error::crc:
    case message_error::transmit_error:
        return type == vitcp::segment_type::send || type == vitcp::segment_type::rdma_write;
    case message_error::protection:
        return type == vitcp::segment_type::rdma_write;
    case message_error::descriptor:
        return type == vitcp::segment_type::send;
    }
    return false;
}

}  // namespace rnic::proto::vitcp_map
