#include "rnic/regmap.h"

namespace rnic::regmap {

// The texts come from the X-macro lists in regmap.h (docs/device.md shows them too).

const char* to_string(cmd_status s) {
    switch (s) {
#define RNIC_CMD_STATUS_TEXT(n, v, t, d) \
    case cmd_status::n:                  \
        return t;
        RNIC_CMD_STATUSES(RNIC_CMD_STATUS_TEXT)
#undef RNIC_CMD_STATUS_TEXT
    }
    return "unknown status";
}

const char* to_string(cqe_status s) {
    switch (s) {
#define RNIC_CQE_STATUS_TEXT(n, v, t, d) \
    case cqe_status::n:                  \
        return t;
        RNIC_CQE_STATUSES(RNIC_CQE_STATUS_TEXT)
#undef RNIC_CQE_STATUS_TEXT
    }
    return "unknown status";
}

const char* to_string(qp_state s) {
    switch (s) {
#define RNIC_QP_STATE_TEXT(n, v, t, d) \
    case qp_state::n:                  \
        return t;
        RNIC_QP_STATES(RNIC_QP_STATE_TEXT)
#undef RNIC_QP_STATE_TEXT
    }
    return "unknown";
}

const char* to_string(access a) {
    switch (a) {
    case access::ro:
        return "ro";
    case access::rw:
        return "rw";
    case access::wo:
        return "wo";
    case access::rw1c:
        return "rw1c";
    }
    return "?";
}

}  // namespace rnic::regmap
