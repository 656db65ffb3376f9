// Mixed workload: a seeded random sequence of every operation the verbs API offers (RDMA Write,
// RDMA Write with Immediate, RDMA Read, Send, Send with Solicited Event, Send with Invalidate,
// Immediate Data, FetchAdd, CmpSwap, masked FetchAdd and CmpSwap, local invalidate), of random sizes
// (crossing FPDU and segment boundaries), on several QPs at once, each QP on its own TCP connection.
// A shadow model knows what every byte of every destination and every atomic result must be; the
// run checks all of it (read data and atomic results at completion, received messages at the
// server, the server's whole buffer at the end).
//
// Why the expected values are never ambiguous under concurrency:
//   * each QP owns disjoint slices of both buffers (its source and read-sink areas at the client,
//     its target area and atomic words at the server), so QPs never race on data;
//   * within a QP, an operation is posted only when no operation in flight overlaps what it reads
//     or writes (RFC 5041 lets a later Write be placed before an earlier one);
//   * atomics on a QP's own words execute in the QP's order, so the shadow knows each original;
//   * plain FetchAdds from every QP hit shared counters: the originals returned must chain (sorted,
//     each is the previous plus the previous add) from the initial value to the final counter,
//     which is exactly linearizability for adds (with adds of 1: "a permutation of 0..n-1");
//   * Sends and Immediate Data arrive in the QP's order, into receives the server announced.
// The operation sequence of each QP depends only on the seed, not on timing.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "driver/verbs.h"
#include "oob.h"
#include "workloads/workload.h"

namespace rnic::platform {

struct mixed_config {
    std::uint32_t qps = 1;
    std::uint32_t operations = 1000;  // per QP
    std::uint32_t queue_depth = 16;   // per QP
    std::uint64_t buffer = 1 << 20;   // registered buffer on each side
    std::uint16_t port = 18515;
    bool event_mode = false;
    std::uint64_t poll_interval_ps = 50000;
    std::uint64_t seed = 1;
    std::uint32_t min_size = 1;
    std::uint32_t max_size = 40 * 1024;
    std::uint32_t receives = 8;     // receives the server keeps posted per QP
    std::uint32_t counters = 2;     // shared FetchAdd counters
    std::uint32_t spare_stags = 4;  // regions per QP and side for Sends with Invalidate / local invalidates
    // CPU time the server spends between accepting one connection and the next (a slow server:
    // the client's next connection is established first and waits for its accept).
    std::uint64_t accept_gap_ps = 0;
    // Flip one byte of the server's buffer after all operations, to prove the final check sees it.
    bool flip_byte = false;
};

// The kinds of operation in the mix. A new verb is one more entry here, one in kKinds (mixed.cpp:
// name and weight), its drawing in mixed::generate and its posting and checking in mixed::client.
enum class mixed_op : std::uint8_t {
    write,
    write_imm,
    read,
    send,
    send_se,
    send_inv,
    immediate,
    fetch_add,
    cmp_swap,
    masked_fetch_add,
    masked_cmp_swap,
    local_inv,
};
constexpr std::size_t kMixedOpKinds = 12;
const char* to_string(mixed_op op);

class mixed : public host_workload {
public:
    // Reads host memory the way a debugger does (no simulated time): host 0 is the client (a),
    // host 1 the server (b). False when the range is outside the memory.
    using peeker = std::function<bool(int host, std::uint64_t addr, void* dst, std::size_t len)>;

    mixed(const mixed_config& cfg, oob_channel& oob, peeker peek, std::function<void()> on_done);

    void client(drv::host_bus& bus, const drv::station_config& station, std::uint32_t server_ip) override;
    void server(drv::host_bus& bus, const drv::station_config& station) override;
    const workload_result& result() const override { return result_; }

    // One operation of a QP's sequence, drawn from the seed before the run.
    struct op_desc {
        mixed_op kind = mixed_op::write;
        std::uint32_t length = 0;
        std::uint64_t local_off = 0;   // into the QP's source / sink area, or its result slot
        std::uint64_t remote_off = 0;  // into the QP's target area at the server
        std::uint32_t index = 0;       // counter (FetchAdd), word (other atomics), spare STag (invalidates)
        std::uint64_t value = 0;       // add (FetchAdd), swap (CmpSwap), Immediate Data
        bool cas_match = false;        // CmpSwap: compare equal to the current value (it succeeds)
        std::uint64_t miss = 0;        // CmpSwap: XORed into the compared bits when it must fail
        std::uint64_t add_or_swap_mask = 0, compare_mask = 0;  // masked atomics (RFC 7306 §5.1)
        std::uint64_t noise = 0;  // masked CmpSwap: fills the compare data's uncompared bits
    };
    const std::vector<op_desc>& sequence(std::uint32_t qp) const { return ops_[qp]; }

private:
    struct area_layout {
        std::uint64_t client_slice = 0, src = 0, sink = 0, area = 0;  // client: per-QP slice, areas
        std::uint64_t server_slice = 0, target = 0;                   // server: per-QP slice, target area
    };
    struct range {
        int space;  // 0 client source, 1 client sink, 2 client result slot, 3 server target
        std::uint64_t begin, end;
        bool writes;
    };
    struct in_flight {
        std::uint32_t op = 0;
        std::uint64_t posted_ps = 0;
        std::vector<range> ranges;
        std::vector<std::uint8_t> expect;  // RDMA Read: the bytes the sink must hold
        std::uint64_t expect_value = 0;    // CmpSwap: the original it must return
    };
    struct fetch_add_record {
        std::uint64_t original, add;
        std::uint32_t counter, qp, op;
    };
    struct sent_message {
        mixed_op kind;
        std::uint32_t op;
        std::vector<std::uint8_t> bytes;  // Sends: the payload
        std::uint64_t imm = 0;            // Immediate Data
        std::uint32_t invalidate = 0;     // Send with Invalidate: the server's STag
    };
    struct row_stats {
        std::uint64_t count = 0, bytes = 0, errors = 0;
        std::vector<std::uint64_t> latencies_ps;
        integrity_result integrity;
    };

    void generate();
    void fail(const std::string& what);
    bool conflicts(std::uint32_t q, const std::vector<range>& ranges) const;
    std::vector<range> ranges_of(const op_desc& op) const;
    void check_bytes(row_stats& row, const std::string& what, const std::uint8_t* got, const std::uint8_t* want,
                     std::size_t len);
    void check_final();
    static std::vector<std::uint8_t> payload(std::uint64_t seed, std::uint32_t q, std::uint32_t i, std::size_t len);
    // Operations that consume one of the server's receives.
    static bool consumes_receive(mixed_op k) {
        return k == mixed_op::send || k == mixed_op::send_se || k == mixed_op::send_inv || k == mixed_op::immediate ||
               k == mixed_op::write_imm;
    }
    void check_value(row_stats& row, const std::string& what, std::uint64_t got, std::uint64_t want);
    std::uint64_t counter_initial(std::uint32_t c) const;

    mixed_config cfg_;
    oob_channel& oob_;
    peeker peek_;
    std::function<void()> on_done_;
    workload_result result_;
    area_layout lay_;
    std::vector<std::vector<op_desc>> ops_;        // per QP
    std::vector<std::vector<in_flight>> flights_;  // per QP, posted and not yet completed
    std::vector<std::deque<sent_message>> sends_;  // per QP: Sends posted, not yet received
    std::vector<std::uint8_t> server_image_;       // what the server's buffer must hold
    std::uint64_t server_addr_ = 0, client_addr_ = 0;
    std::vector<fetch_add_record> fetch_adds_;
    std::vector<std::uint64_t> words_;  // per QP: its atomic words as the shadow sees them
    row_stats rows_[kMixedOpKinds];
    std::uint64_t elapsed_ps_ = 0;
    static constexpr std::uint32_t kWords = 16;  // per QP: 0-7 CmpSwap (masked or not), 8-15 masked FetchAdd
    static constexpr std::uint64_t kResultSlots = 512;
};

}  // namespace rnic::platform
