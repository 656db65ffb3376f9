#include "workloads/perf_server.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/log.h"
#include "proto/bytes.h"

#define PERF_LOG(lvl, bus, expr) RNIC_LOG_AT(lvl, app, (bus).now_ps(), (bus).host_name() + ".perf_server", expr)

namespace rnic::platform {
namespace {

constexpr std::uint32_t kMsg = 32;
constexpr std::uint64_t kWakeCapPs = 1'000'000'000ULL;  // 1 ms between CQ polls at most
constexpr std::uint64_t kReplyId = ~std::uint64_t{0};

}  // namespace

perf_server::perf_server(const perf_server_config& cfg, std::function<void()> on_done)
    : cfg_(cfg), on_done_(std::move(on_done)) {}

void perf_server::server(drv::host_bus& bus, const drv::station_config& station) {
    drv::context ctx(bus);
    auto fail = [&](const std::string& what) {
        PERF_LOG(error, bus, what);
        record_failure(result_, "perf_server: " + what);
        result_.finished = false;
        on_done_();
    };
    drv::station_config st = station;
    st.command_timeout_ps = std::max(st.command_timeout_ps, cfg_.timeout_ps);
    std::uint32_t pd = 0;
    std::uint64_t data = 0, recvs = 0, reply = 0;
    drv::memory_region data_mr, recv_mr, reply_mr;
    drv::completion_queue* cq = nullptr;
    drv::queue_pair* qp = nullptr;
    const std::uint64_t recv_bytes = static_cast<std::uint64_t>(cfg_.receives) * cfg_.max_send;
    namespace mr = regmap::mr_access;
    if (ctx.open(st) != drv::status::ok || ctx.alloc_pd(&pd) != drv::status::ok ||
        ctx.alloc_buffer(cfg_.buffer, &data) != drv::status::ok ||
        ctx.alloc_buffer(recv_bytes, &recvs) != drv::status::ok || ctx.alloc_buffer(64, &reply) != drv::status::ok ||
        ctx.reg_mr(pd, data, cfg_.buffer, mr::local_write | mr::remote_write | mr::remote_read | mr::remote_atomic,
                   &data_mr) != drv::status::ok ||
        ctx.reg_mr(pd, recvs, recv_bytes, mr::local_write, &recv_mr) != drv::status::ok ||
        ctx.reg_mr(pd, reply, 64, 0, &reply_mr) != drv::status::ok || ctx.create_cq(256, &cq) != drv::status::ok ||
        ctx.create_qp(pd, cq, cq, 16, cfg_.receives, &qp) != drv::status::ok) {
        fail("set-up failed (see the log)");
        return;
    }
    const std::vector<std::uint8_t> zero(cfg_.buffer, 0);
    bus.mem_write(data, zero.data(), zero.size());
    auto post_recv = [&](std::uint64_t i) {
        drv::recv_wr wr;
        wr.wr_id = i;
        wr.addr = recvs + i * cfg_.max_send;
        wr.length = cfg_.max_send;
        wr.stag = recv_mr.stag;
        return ctx.post_recv(qp, wr) == drv::status::ok;
    };
    for (std::uint32_t i = 0; i < cfg_.receives; ++i) {
        if (!post_recv(i)) {
            fail("post_recv failed");
            return;
        }
    }
    PERF_LOG(info, bus,
             "waiting for a client on port " << cfg_.port << " (buffer of " << cfg_.buffer << " bytes, STag 0x"
                                             << std::hex << data_mr.stag << ")");
    if (ctx.accept(qp, cfg_.port) != drv::status::ok) {
        fail("accept on port " + std::to_string(cfg_.port) + " failed");
        return;
    }
    result_.setup_ok = true;
    PERF_LOG(info, bus, "accepted a client");

    const std::uint64_t data_len = cfg_.buffer - kPerfDataOffset;
    auto send_reply = [&](std::uint32_t status, std::uint64_t a, std::uint64_t b, std::uint32_t c) {
        std::uint8_t m[kMsg] = {};
        proto::put_le32(m, kPerfMagic);
        proto::put_le32(m + 4, status);
        proto::put_le64(m + 8, a);
        proto::put_le64(m + 16, b);
        proto::put_le32(m + 24, c);
        bus.mem_write(reply, m, sizeof m);
        drv::send_wr wr;
        wr.wr_id = kReplyId;
        wr.opcode = regmap::wr_opcode::send;
        wr.local_addr = reply;
        wr.length = kMsg;
        wr.local_stag = reply_mr.stag;
        return ctx.post_send(qp, wr) == drv::status::ok;
    };
    // Checks [data + kPerfDataOffset, + n) against the pattern; one result row.
    auto check_area = [&](const char* what, std::uint64_t seed, std::uint64_t n, std::uint64_t ops,
                          std::uint32_t size) {
        std::vector<std::uint8_t> got(n);
        bus.mem_read(data + kPerfDataOffset, got.data(), n);
        workload_row row;
        row.op = what;
        row.size = size;
        row.iterations = ops;
        row.bytes = ops * size;
        std::uint64_t bad = 0, first = 0;
        for (std::uint64_t o = 0; o < n; ++o) {
            if (got[o] != perf_pattern(seed, o) && bad++ == 0) first = o;
        }
        row.integrity.bytes_checked = n;
        row.integrity.bytes_mismatched = bad;
        row.integrity.ok = bad == 0;
        if (bad != 0) {
            row.integrity.first_mismatch = first;
            row.integrity.detail = std::string(what) + ": " + std::to_string(bad) + " of " + std::to_string(n) +
                                   " bytes differ, the first at data offset " + std::to_string(first);
            record_failure(result_, row.integrity.detail);
        }
        result_.rows.push_back(row);
        return std::make_pair(bad, first);
    };

    std::uint32_t sends_left = 0, send_size = 0, send_index = 0;
    std::uint64_t send_seed = 0;
    workload_row sends_row;
    bool said_bye = false;
    std::vector<drv::work_completion> wcs;
    for (;;) {
        wcs.clear();
        int n = 0;
        ctx.poll_cq(cq, 1, &wcs, &n);
        if (n == 0) {
            regmap::qp_state qs = regmap::qp_state::rts;
            if (ctx.wait_cq(cq, kWakeCapPs) == drv::status::timeout && ctx.query_qp(qp, &qs) == drv::status::ok &&
                qs != regmap::qp_state::rts) {
                break;  // the client left
            }
            continue;
        }
        const drv::work_completion& wc = wcs[0];
        if (wc.opcode == drv::wc_opcode::qp_error || wc.status == regmap::cqe_status::flushed) break;
        if (wc.status != regmap::cqe_status::success) {
            fail(std::string("completion with status ") + regmap::to_string(wc.status));
            return;
        }
        if (wc.opcode != drv::wc_opcode::recv) continue;  // our replies' completions
        const std::uint64_t slot = wc.wr_id;
        std::vector<std::uint8_t> msg(std::min<std::uint32_t>(wc.byte_len, cfg_.max_send));
        bus.mem_read(recvs + slot * cfg_.max_send, msg.data(), msg.size());
        if (!post_recv(slot)) {
            fail("post_recv failed");
            return;
        }
        if (sends_left > 0) {
            // One of the client's data Sends.
            ++sends_row.iterations;
            sends_row.bytes += msg.size();
            std::uint64_t bad = 0;
            for (std::uint32_t j = 0; j < send_size; ++j) {
                if (j >= msg.size() || msg[j] != perf_pattern(send_seed + send_index, j)) ++bad;
            }
            if (msg.size() != send_size) ++bad;
            sends_row.integrity.bytes_checked += send_size;
            sends_row.integrity.bytes_mismatched += bad;
            if (bad != 0 && sends_row.integrity.ok) {
                sends_row.integrity.ok = false;
                sends_row.integrity.detail = "Send " + std::to_string(send_index) + " of " +
                                             std::to_string(msg.size()) + " bytes differs in " + std::to_string(bad) +
                                             " bytes";
                record_failure(result_, sends_row.integrity.detail);
            }
            ++send_index;
            if (--sends_left == 0) {
                result_.rows.push_back(sends_row);
                if (!send_reply(sends_row.integrity.ok ? 0 : 1, sends_row.integrity.bytes_checked,
                                sends_row.integrity.bytes_mismatched, 0)) {
                    fail("post_send failed");
                    return;
                }
            }
            continue;
        }
        if (msg.size() != kMsg || proto::get_le32(msg.data()) != kPerfMagic) {
            PERF_LOG(error, bus, "a " << msg.size() << "-byte message that is no perf request: answered with status 2");
            send_reply(2, 0, 0, 0);
            continue;
        }
        const auto op = static_cast<perf_op>(proto::get_le32(msg.data() + 4));
        const std::uint32_t size = proto::get_le32(msg.data() + 8), count = proto::get_le32(msg.data() + 12);
        const std::uint64_t seed = proto::get_le64(msg.data() + 16);
        const std::uint64_t span = size == 0 ? 0 : data_len / size * size;
        const std::uint64_t area = std::min<std::uint64_t>(static_cast<std::uint64_t>(size) * count, span);
        bool ok = true;
        switch (op) {
        case perf_op::hello:
            PERF_LOG(info, bus, "hello");
            ok = send_reply(0, data_mr.to_base, cfg_.buffer, data_mr.stag);
            break;
        case perf_op::check_write: {
            const auto r = check_area("client rdma_write", seed, area, count, size);
            PERF_LOG(info, bus,
                     "checked " << area << " bytes of " << count << " RDMA Writes of " << size << " bytes: " << r.first
                                << " differ");
            ok = send_reply(r.first == 0 ? 0 : 1, area, r.first, static_cast<std::uint32_t>(r.second));
            break;
        }
        case perf_op::fill_read: {
            std::vector<std::uint8_t> fill(area);
            for (std::uint64_t o = 0; o < area; ++o) fill[o] = perf_pattern(seed, o);
            bus.mem_write(data + kPerfDataOffset, fill.data(), fill.size());
            workload_row row;
            row.op = "client rdma_read";
            row.size = size;
            row.iterations = count;
            row.bytes = static_cast<std::uint64_t>(count) * size;
            result_.rows.push_back(row);  // the client checks what it read
            ok = send_reply(0, area, 0, 0);
            break;
        }
        case perf_op::expect_sends:
            if (size == 0 || size > cfg_.max_send || count == 0) {
                ok = send_reply(2, 0, 0, 0);
                break;
            }
            sends_left = count;
            send_size = size;
            send_seed = seed;
            send_index = 0;
            sends_row = workload_row{};
            sends_row.op = "client send";
            sends_row.size = size;
            ok = send_reply(0, 0, 0, 0);
            break;
        case perf_op::check_atomic: {
            std::uint64_t counter = 0;
            bus.mem_read(data, &counter, sizeof counter);
            workload_row row;
            row.op = "client fetch_add";
            row.size = 8;
            row.iterations = count;
            row.bytes = 8ull * count;
            row.integrity.bytes_checked = 8;
            row.integrity.ok = counter == count;
            if (!row.integrity.ok) {
                row.integrity.bytes_mismatched = 8;
                row.integrity.detail =
                    "the counter is " + std::to_string(counter) + " after " + std::to_string(count) + " FetchAdds of 1";
                record_failure(result_, row.integrity.detail);
            }
            result_.rows.push_back(row);
            const std::uint64_t zero64 = 0;
            bus.mem_write(data, &zero64, sizeof zero64);
            ok = send_reply(row.integrity.ok ? 0 : 1, counter, 0, 0);
            break;
        }
        case perf_op::bye:
            said_bye = true;
            ok = send_reply(0, 0, 0, 0);
            break;
        default:
            PERF_LOG(error, bus, "unknown request op " << static_cast<std::uint32_t>(op) << ": status 2");
            ok = send_reply(2, 0, 0, 0);
        }
        if (!ok) {
            fail("post_send failed");
            return;
        }
    }
    PERF_LOG(info, bus, "the client left" << (said_bye ? "" : " without saying bye"));
    if (!said_bye) record_failure(result_, "perf_server: the client left without saying bye");
    result_.finished = result_.error.empty() && !result_.rows.empty();
    on_done_();
}

}  // namespace rnic::platform
