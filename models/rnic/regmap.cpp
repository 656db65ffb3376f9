#include "rnic/regmap.h"

namespace rnic::regmap {

const char* to_string(cmd_status s) {
    switch (s) {
        case cmd_status::ok: return "ok";
        case cmd_status::bad_opcode: return "bad opcode";
        case cmd_status::bad_parameter: return "bad parameter";
        case cmd_status::no_resources: return "no resources";
        case cmd_status::bad_handle: return "bad handle";
        case cmd_status::bad_state: return "bad state";
        case cmd_status::connection_refused: return "connection refused";
        case cmd_status::connection_timeout: return "connection timeout";
        case cmd_status::mpa_negotiation_failed: return "MPA negotiation failed";
    }
    return "unknown status";
}

const char* to_string(cqe_status s) {
    switch (s) {
        case cqe_status::success: return "success";
        case cqe_status::local_length_error: return "local length error";
        case cqe_status::local_protection_error: return "local protection error";
        case cqe_status::remote_access_error: return "remote access error";
        case cqe_status::remote_operation_error: return "remote operation error";
        case cqe_status::transport_error: return "transport error";
        case cqe_status::flushed: return "flushed";
        case cqe_status::remote_invalid_request: return "remote invalid request";
        case cqe_status::bad_opcode: return "bad opcode";
    }
    return "unknown status";
}

const char* to_string(qp_state s) {
    switch (s) {
        case qp_state::idle: return "idle";
        case qp_state::rts: return "rts";
        case qp_state::closing: return "closing";
        case qp_state::terminate: return "terminate";
        case qp_state::error: return "error";
    }
    return "unknown";
}

}  // namespace rnic::regmap
