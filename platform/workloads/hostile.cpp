#include "workloads/hostile.h"

#include <algorithm>
#include <cstring>
#include <deque>

#include "integrity.h"
#include "workloads/write_bw.h"  // fill_pattern

namespace rnic::platform {

namespace acc = regmap::mr_access;
using attack::generator;

namespace {

// Host a's application memory: every region between guard areas (never registered, never granted).
constexpr std::uint64_t kGuard = 4096;
constexpr std::uint64_t kLenW = 16384, kLenAt = 4096, kLenRo = 8192, kLenNr = 8192, kLenOpd = 8192, kLenStale = 4096,
                        kLenInv = 4096;
constexpr std::uint32_t kReceives = 8, kRecvLen = 256, kRecvStride = 512;
constexpr std::uint64_t kLenRecv = kReceives * kRecvStride;
constexpr std::uint32_t kIrd = 4;
// Host b: staging slots for raw ULPDUs, and the well-behaved QP's write source and read sink.
// Peer framing stages the whole stream of an episode from the first slot on (up to 56 good Writes
// of up to 16 KiB and more): slots of 20 KiB.
constexpr std::uint64_t kSlot = 20480, kSlots = 64, kGoodSrc = kSlot * kSlots, kGoodSink = kGoodSrc + kLenOpd;
constexpr std::uint64_t kPeerBuffer = kGoodSink + kLenOpd;

std::vector<std::uint8_t> pattern(std::uint64_t seed, std::uint64_t tag, std::size_t len) {
    std::vector<std::uint8_t> v(len);
    fill_pattern(v.data(), v.size(), seed, tag);
    return v;
}

std::uint64_t layout(std::uint64_t& at, std::uint64_t len) {
    const std::uint64_t here = at;
    at += len + kGuard;
    return here;
}

}  // namespace

hostile::hostile(const hostile_config& cfg, oob_channel& oob, peek_fn target_peek, observe_fn target_observe,
                 std::function<void()> on_done)
    : cfg_(cfg),
      oob_(oob),
      peek_(std::move(target_peek)),
      observe_(std::move(target_observe)),
      on_done_(std::move(on_done)) {}

bool hostile::poll_until(drv::context& ctx, drv::host_bus& bus, drv::completion_queue* cq,
                         const std::function<bool(const drv::work_completion&)>& pred, std::uint64_t budget_ps,
                         drv::work_completion* out) {
    const std::uint64_t deadline = bus.now_ps() + budget_ps;
    std::vector<drv::work_completion> wcs;
    for (;;) {
        int n = 0;
        wcs.clear();  // poll_cq appends
        if (ctx.poll_cq(cq, 16, &wcs, &n) == drv::status::ok) {
            for (int i = 0; i < n; ++i) {
                if (pred(wcs[static_cast<std::size_t>(i)])) {
                    if (out != nullptr) *out = wcs[static_cast<std::size_t>(i)];
                    return true;
                }
            }
        }
        if (n > 0) continue;
        if (bus.now_ps() >= deadline) return false;
        bus.spend(cfg_.poll_interval_ps);
    }
}

// ---- host a: the target ----------------------------------------------------------------------

void hostile::client(drv::host_bus& bus, const drv::station_config& station, std::uint32_t) {
    drv::context ctx(bus);
    std::uint32_t pd = 0, pd2 = 0;
    std::uint64_t at = kGuard;
    const std::uint64_t off_w = layout(at, kLenW), off_at = layout(at, kLenAt), off_ro = layout(at, kLenRo),
                        off_nr = layout(at, kLenNr), off_opd = layout(at, kLenOpd), off_stale = layout(at, kLenStale),
                        off_inv = layout(at, kLenInv), off_recv = layout(at, kLenRecv);
    arena_len_ = at;
    drv::memory_region w, atm, ro, nr, opd, stale, inv, rcv;
    drv::completion_queue *cq = nullptr, *cq_good = nullptr;
    drv::queue_pair* good = nullptr;
    using rk = ring_guard::ring_kind;
    if (ctx.open(station) != drv::status::ok) {
        record_failure(result_, "target set-up failed (see the log)");
        on_done_();
        return;
    }
    // From here on every DMA write of host a's device is checked against the driver's rings.
    rings_.add(ctx.dev().command_ring(), std::uint64_t{ctx.dev().command_ring_entries()} * regmap::kCommandSize,
               rk::command);
    if (observe_) observe_([this](std::uint64_t addr, std::uint64_t len) { rings_.on_device_write(addr, len); });
    auto watch_cq = [this](const drv::completion_queue* c) {
        rings_.add(c->ring, std::uint64_t{c->entries} * regmap::kCqeSize, rk::cq);
    };
    auto watch_qp = [this](const drv::queue_pair* q) {
        rings_.add(q->sq_ring, std::uint64_t{q->sq_entries} * regmap::kSendWqeSize, rk::sq);
        rings_.add(q->rq_ring, std::uint64_t{q->rq_entries} * regmap::kRecvWqeSize, rk::rq);
    };
    const bool ok =
        ctx.alloc_pd(&pd) == drv::status::ok && ctx.alloc_pd(&pd2) == drv::status::ok &&
        ctx.alloc_buffer(arena_len_, &arena_) == drv::status::ok &&
        ctx.reg_mr(pd, arena_ + off_w, kLenW, acc::remote_write | acc::remote_read | acc::local_write, &w) ==
            drv::status::ok &&
        ctx.reg_mr(pd, arena_ + off_at, kLenAt,
                   acc::remote_atomic | acc::remote_write | acc::remote_read | acc::local_write,
                   &atm) == drv::status::ok &&
        ctx.reg_mr(pd, arena_ + off_ro, kLenRo, acc::remote_read, &ro) == drv::status::ok &&
        ctx.reg_mr(pd, arena_ + off_nr, kLenNr, acc::local_write, &nr) == drv::status::ok &&
        ctx.reg_mr(pd2, arena_ + off_opd, kLenOpd, acc::remote_write | acc::remote_read | acc::local_write, &opd) ==
            drv::status::ok &&
        ctx.reg_mr(pd, arena_ + off_stale, kLenStale, acc::remote_write | acc::local_write, &stale) ==
            drv::status::ok &&
        ctx.dereg_mr(stale) == drv::status::ok &&
        ctx.reg_mr(pd2, arena_ + off_inv, kLenInv, acc::remote_write | acc::local_write, &inv) == drv::status::ok &&
        ctx.reg_mr(pd, arena_ + off_recv, kLenRecv, acc::local_write, &rcv) == drv::status::ok &&
        ctx.create_cq(256, &cq) == drv::status::ok && ctx.create_cq(64, &cq_good) == drv::status::ok &&
        ctx.create_qp(pd2, cq_good, cq_good, 16, 16, &good) == drv::status::ok;
    if (!ok) {
        record_failure(result_, "target set-up failed (see the log)");
        on_done_();
        return;
    }
    watch_cq(cq);
    watch_cq(cq_good);
    watch_qp(good);
    rings_.exclude(arena_, arena_len_);  // the arena has its own shadow
    // Known contents everywhere, so that any stray byte shows.
    const std::vector<std::uint8_t> fill = pattern(cfg_.seed, 0x4057, arena_len_);
    bus.mem_write(arena_, fill.data(), fill.size());
    target_.writable = {w.stag, w.to_base, kLenW};
    target_.atomic = {atm.stag, atm.to_base, kLenAt};
    target_.read_only = {ro.stag, ro.to_base, kLenRo};
    target_.no_remote = {nr.stag, nr.to_base, kLenNr};
    target_.other_pd = {opd.stag, opd.to_base, kLenOpd};
    target_.stale = {stale.stag, stale.to_base, kLenStale};
    target_.invalidated = {inv.stag, inv.to_base, kLenInv};
    target_.receives = kReceives;
    target_.recv_len = kRecvLen;
    target_.ird = kIrd;
    target_.max_payload = cfg_.max_payload;
    target_.send_buffer = cfg_.target_send_buffer;
    target_.max_fpdus = kSlots;
    target_.peer_frames = cfg_.mode == "grammar" && cfg_.stream == "peer";
    target_.crc = cfg_.crc;
    target_.mulpdu = cfg_.mulpdu;
    target_.max_segments = kSlots;
    target_ip_ = station.ipv4;
    good_region_ = arena_ + off_opd;
    good_len_ = kLenOpd;
    good_stag_ = opd.stag;
    good_image_.assign(fill.begin() + static_cast<std::ptrdiff_t>(off_opd),
                       fill.begin() + static_cast<std::ptrdiff_t>(off_opd + kLenOpd));
    grants_ = {{arena_ + off_w, kLenW}, {arena_ + off_at, kLenAt}};
    for (std::uint32_t i = 0; i < kReceives; ++i) grants_.push_back({arena_ + off_recv + i * kRecvStride, kRecvLen});
    oob_.publish("target", {station.ipv4, cfg_.port, 0, 0, 0});

    // The well-behaved peer connects first; once its first FPDU is in (until then a responder sends
    // nothing, RFC 5044 §7.1.2), the invalidated region is invalidated on its QP.
    const drv::read_limits limits{kIrd, kIrd, false};
    if (ctx.accept(good, static_cast<std::uint16_t>(cfg_.port + 1), limits) != drv::status::ok) {
        record_failure(result_, "target: accept of the well-behaved QP failed");
        on_done_();
        return;
    }
    oob_.wait_for("good-up");
    drv::send_wr li;
    li.wr_id = 7;
    li.opcode = regmap::wr_opcode::local_invalidate;
    li.invalidate_stag = inv.stag;
    drv::work_completion wc;
    if (ctx.post_send(good, li) != drv::status::ok ||
        !poll_until(
            ctx, bus, cq_good, [](const drv::work_completion& c) { return c.wr_id == 7; }, 1'000'000'000, &wc) ||
        wc.status != regmap::cqe_status::success) {
        record_failure(result_, "target: local invalidate failed");
    }
    shadow_.resize(arena_len_);
    peek_(arena_, shadow_.data(), shadow_.size());
    oob_.publish("setup", {});

    for (std::uint64_t e = 0; e < cfg_.episodes && result_.error.empty(); ++e) {
        drv::queue_pair* qp = nullptr;
        if (ctx.create_qp(pd, cq, cq, 16, kReceives, &qp) != drv::status::ok) {
            record_failure(result_, "target: create_qp failed in episode " + std::to_string(e));
            break;
        }
        watch_qp(qp);
        const std::uint64_t sq_ring = qp->sq_ring, rq_ring = qp->rq_ring;
        for (std::uint32_t i = 0; i < kReceives; ++i) {
            drv::recv_wr r;
            r.wr_id = 100 + i;
            r.addr = arena_ + off_recv + i * kRecvStride;
            r.length = kRecvLen;
            r.stag = rcv.stag;
            ctx.post_recv(qp, r);
        }
        oob_.publish("ready-" + std::to_string(e), {});
        if (ctx.accept(qp, cfg_.port, limits) != drv::status::ok) {
            record_failure(result_, "target: accept failed in episode " + std::to_string(e));
            break;
        }
        drv::work_completion err;
        const bool seen = poll_until(
            ctx, bus, cq, [](const drv::work_completion& c) { return c.opcode == drv::wc_opcode::qp_error; },
            cfg_.answer_timeout_ps, &err);
        judge(e, seen ? &err : nullptr);
        if (!seen) ctx.modify_qp_to_error(qp);
        poll_until(
            ctx, bus, cq, [](const drv::work_completion&) { return false; }, 0, nullptr);  // drain
        if (ctx.destroy_qp(qp) != drv::status::ok) {
            findings_.push_back("episode " + std::to_string(e) + ": destroy_qp refused");
        } else {
            // Freed: a later write there (a late completion of the destroyed QP) counts as elsewhere.
            rings_.remove(sq_ring);
            rings_.remove(rq_ring);
        }
        oob_.publish("judged-" + std::to_string(e), {});
    }
    oob_.wait_for("peer-done");
    check_memory();
    oob_.publish("target-done", {});
    result_.finished = result_.error.empty();
    on_done_();
}

void hostile::judge(std::uint64_t index, const drv::work_completion* err) {
    episode& ep = episodes_.at(index);
    class_count& c = classes_[ep.cls];
    ++c.sent;
    if (err == nullptr) {
        ep.outcome = "no answer";
    } else if (!err->terminate.valid) {
        ep.outcome = "stream closed without a Terminate";
    } else {
        ep.outcome = std::string(err->terminate.received ? "Terminate received " : "Terminate sent ") +
                     attack::term_text(err->terminate.layer, err->terminate.etype, err->terminate.code);
    }
    ++outcomes_[ep.outcome];
    using kind = attack::expectation::kind;
    switch (ep.expect.what) {
    case kind::terminate:
        ep.as_required = err != nullptr && err->terminate.valid && !err->terminate.received &&
                         err->terminate.layer == ep.expect.layer && err->terminate.etype == ep.expect.etype &&
                         err->terminate.code == ep.expect.code;
        break;
    case kind::peer_terminate:
        ep.as_required = err != nullptr && err->terminate.valid && err->terminate.received;
        break;
    case kind::unknown:
        ep.as_required = err != nullptr;
        break;          // mutate: any answer, as long as one comes
    case kind::closed:  // the stream closed under it: no Terminate of host a's owed (RFC 5044 §8 code 1)
        ep.as_required = err != nullptr && !(err->terminate.valid && !err->terminate.received);
        break;
    case kind::none:
        ep.as_required = true;
        break;
    }
    if (err == nullptr) ++unanswered_;
    if (ep.as_required) {
        ++c.as_required;
    } else {
        ++c.wrong;
        ++wrong_;
        if (findings_.size() < 20) {
            const std::string want =
                ep.expect.what == kind::terminate
                    ? "Terminate " + attack::term_text(ep.expect.layer, ep.expect.etype, ep.expect.code)
                    : "an answer";
            findings_.push_back("episode " + std::to_string(index) + ", " + ep.cls + ": expected " + want + ", got " +
                                ep.outcome);
        }
    }
}

void hostile::check_memory() {
    // The shadow compares every byte of host a's application memory: outside the grants it must be
    // what it was; the well-behaved QP's region must hold what that QP wrote.
    std::vector<std::uint8_t> now(arena_len_);
    peek_(arena_, now.data(), now.size());
    shadow_bytes_ = arena_len_;
    auto granted = [&](std::uint64_t addr) {
        for (const auto& g : grants_)
            if (addr >= g.first && addr < g.first + g.second) return true;
        return false;
    };
    for (std::uint64_t i = 0; i < arena_len_; ++i) {
        const std::uint64_t addr = arena_ + i;
        if (addr >= good_region_ && addr < good_region_ + good_len_) {
            if (now[i] != good_image_[addr - good_region_]) ++bytes_outside_grants_;
            continue;
        }
        if (!granted(addr) && now[i] != shadow_[i]) {
            if (bytes_outside_grants_ == 0)
                findings_.push_back("byte outside the grants changed at arena offset " + std::to_string(i));
            ++bytes_outside_grants_;
        }
    }
    good_bytes_checked_ += good_len_;
    checked_ = true;
    for (const std::string& f : rings_.findings())
        if (findings_.size() < 24) findings_.push_back(f);
    record_check(result_, "hostile: the device wrote nothing into the driver's rings but CQEs and command answers",
                 rings_.bytes_outside_grants() == 0 && rings_.allowed_bytes() > 0,
                 std::to_string(rings_.bytes_outside_grants()) + " bytes outside, " +
                     std::to_string(rings_.allowed_bytes()) + " allowed bytes written");
    record_check(result_, "hostile: no byte outside the grants changed", bytes_outside_grants_ == 0,
                 std::to_string(bytes_outside_grants_) + " bytes");
    record_check(result_, "hostile: every violation answered as required", wrong_ == 0 && unanswered_ == 0,
                 std::to_string(wrong_) + " wrong, " + std::to_string(unanswered_) + " unanswered" +
                     (findings_.empty() ? "" : "; first: " + findings_.front()));
    record_check(result_, "hostile: the well-behaved QP completed intact", good_errors_ == 0 && good_ops_ > 0,
                 std::to_string(good_ops_) + " operations, " + std::to_string(good_errors_) + " errors");
}

// ---- host b: the hostile peer ----------------------------------------------------------------

void hostile::server(drv::host_bus& bus, const drv::station_config& station) {
    drv::context ctx(bus);
    std::uint32_t pd = 0;
    std::uint64_t buf = 0;
    drv::memory_region mr;
    drv::completion_queue *cq = nullptr, *cq_good = nullptr;
    drv::queue_pair* good = nullptr;
    if (ctx.open(station) != drv::status::ok || ctx.alloc_pd(&pd) != drv::status::ok ||
        ctx.alloc_buffer(kPeerBuffer, &buf) != drv::status::ok ||
        ctx.reg_mr(pd, buf, kPeerBuffer, acc::local_write | acc::remote_write | acc::remote_read, &mr) !=
            drv::status::ok ||
        ctx.create_cq(256, &cq) != drv::status::ok || ctx.create_cq(64, &cq_good) != drv::status::ok ||
        ctx.create_qp(pd, cq_good, cq_good, 16, 16, &good) != drv::status::ok) {
        record_failure(result_, "peer set-up failed (see the log)");
        return;
    }
    const remote_buffer t = oob_.wait_for("target");
    const drv::read_limits limits{kIrd, kIrd, false};
    if (ctx.connect(good, t.ipv4, static_cast<std::uint16_t>(t.port + 1), 40000, limits) != drv::status::ok) {
        record_failure(result_, "peer: the well-behaved QP could not connect");
        return;
    }
    {
        // A first Write that leaves the region as it is: the target's side may now send.
        bus.mem_write(buf + kGoodSrc, good_image_.data(), 8);
        drv::send_wr gw;
        gw.wr_id = 1;
        gw.opcode = regmap::wr_opcode::rdma_write;
        gw.local_addr = buf + kGoodSrc;
        gw.length = 8;
        gw.local_stag = mr.stag;
        gw.remote_addr = target_.other_pd.to;
        gw.remote_stag = good_stag_;
        drv::work_completion wc;
        if (ctx.post_send(good, gw) != drv::status::ok ||
            !poll_until(
                ctx, bus, cq_good, [](const drv::work_completion&) { return true; }, cfg_.answer_timeout_ps, &wc) ||
            wc.status != regmap::cqe_status::success) {
            record_failure(result_, "peer: the well-behaved QP's first Write failed");
        }
        oob_.publish("good-up", {});
    }
    oob_.wait_for("setup");
    generator gen(target_, cfg_.seed);
    const std::vector<attack::fpdu> recorded = gen.good_conversation(cfg_.max_good + 4);
    std::mt19937_64 good_rng(cfg_.seed ^ 0x600d);
    std::vector<drv::work_completion> wcs;
    for (std::uint64_t e = 0; e < cfg_.episodes && result_.error.empty(); ++e) {
        const std::vector<attack::fpdu> batch =
            cfg_.mode == "mutate" ? gen.mutate(recorded) : gen.episode(cfg_.max_good);
        episode ep;
        ep.cls = cfg_.mode == "mutate" ? "mutated" : batch.back().cls;
        ep.expect =
            cfg_.mode == "mutate" ? attack::expectation{attack::expectation::kind::unknown} : batch.back().expect;
        episodes_.push_back(ep);
        oob_.wait_for("ready-" + std::to_string(e));
        drv::queue_pair* qp = nullptr;
        const auto local_port = static_cast<std::uint16_t>(41000 + e % 20000);
        if (ctx.create_qp(pd, cq, cq, kSlots, 16, &qp) != drv::status::ok ||
            ctx.connect(qp, t.ipv4, t.port, local_port, limits) != drv::status::ok) {
            record_failure(result_, "peer: connection of episode " + std::to_string(e) + " failed");
            break;
        }
        // The well-behaved QP works beside it: a Write of a fresh pattern, and a Read back of it.
        const std::uint64_t len = 1 + good_rng() % 4096, off = good_rng() % (good_len_ - len + 1);
        const std::vector<std::uint8_t> data = pattern(good_rng(), e, len);
        bus.mem_write(buf + kGoodSrc + off, data.data(), len);
        drv::send_wr gw;
        gw.wr_id = 1;
        gw.opcode = regmap::wr_opcode::rdma_write;
        gw.local_addr = buf + kGoodSrc + off;
        gw.length = static_cast<std::uint32_t>(len);
        gw.local_stag = mr.stag;
        gw.remote_addr = target_.other_pd.to + off;
        gw.remote_stag = good_stag_;
        drv::send_wr gr = gw;
        gr.wr_id = 2;
        gr.opcode = regmap::wr_opcode::rdma_read;
        gr.local_addr = buf + kGoodSink + off;
        const bool good_posted =
            ctx.post_send(good, gw) == drv::status::ok && ctx.post_send(good, gr) == drv::status::ok;
        std::size_t posted = 0;
        bool close_after = false;
        if (target_.peer_frames) {
            // The peer's own FPDUs, cut into TCP segments where the plan says (raw_stream work
            // requests, one segment each).
            const attack::stream_plan plan = gen.frame_stream(batch);
            close_after = plan.close_after;
            ++cuts_[plan.cut];
            fpdus_split_ += plan.fpdus_split;
            segments_coalesced_ += plan.segments_coalesced;
            bus.mem_write(buf, plan.bytes.data(), plan.bytes.size());
            std::size_t from = 0;
            for (std::size_t i = 0; i < plan.ends.size(); ++i) {
                drv::send_wr r;
                r.wr_id = 1000 + i;
                r.opcode = regmap::wr_opcode::raw_stream;
                r.local_addr = buf + from;
                r.length = static_cast<std::uint32_t>(plan.ends[i] - from);
                r.local_stag = mr.stag;
                r.signaled = i + 1 == plan.ends.size();
                if (ctx.post_send(qp, r) != drv::status::ok) break;
                ++posted;
                from = plan.ends[i];
            }
            segments_ += posted;
            for (const attack::fpdu& f : batch) {
                if (f.expect.what == attack::expectation::kind::none) ++good_fpdus_;
                if (f.cls == "good_write_over_mulpdu") ++over_mulpdu_;
            }
            fpdus_sent_ += posted == plan.ends.size() ? batch.size() : 0;
        }
        // The hostile ULPDUs, verbatim (test mode): the NIC frames them and adds the CRC.
        for (std::size_t i = 0; !target_.peer_frames && i < batch.size() && i < kSlots; ++i) {
            const attack::fpdu& f = batch[i];
            bus.mem_write(buf + i * kSlot, f.ulpdu.data(), f.ulpdu.size());
            drv::send_wr r;
            r.wr_id = 1000 + i;
            r.opcode = regmap::wr_opcode::raw_ulpdu;
            r.local_addr = buf + i * kSlot;
            r.length = static_cast<std::uint32_t>(f.ulpdu.size());
            r.local_stag = mr.stag;
            r.signaled = i + 1 == batch.size();
            if (ctx.post_send(qp, r) != drv::status::ok) break;
            ++posted;
            if (f.expect.what == attack::expectation::kind::none) ++good_fpdus_;
        }
        if (!target_.peer_frames) fpdus_sent_ += posted;
        ++violations_;
        // The answer: the target's Terminate (or, for a mutation it accepted, the end of the batch;
        // then the peer closes the stream itself).
        drv::work_completion err;
        bool ended = poll_until(
            ctx, bus, cq,
            [&](const drv::work_completion& c) {
                return c.opcode == drv::wc_opcode::qp_error ||
                       ((cfg_.mode == "mutate" || close_after) && c.wr_id == 1000 + posted - 1);
            },
            cfg_.answer_timeout_ps, &err);
        if (ended && err.opcode != drv::wc_opcode::qp_error && close_after) {
            // The target still waits for the rest of the FPDU: the peer closes the stream.
            ctx.disconnect(qp);
            poll_until(
                ctx, bus, cq, [](const drv::work_completion& c) { return c.opcode == drv::wc_opcode::qp_error; },
                20'000'000, &err);
        } else if (ended && err.opcode != drv::wc_opcode::qp_error) {
            ended = poll_until(
                ctx, bus, cq, [](const drv::work_completion& c) { return c.opcode == drv::wc_opcode::qp_error; },
                20'000'000, &err);
            if (!ended) ctx.disconnect(qp);
        }
        // The well-behaved QP's two operations complete, and the Read returns what the Write put.
        int done = 0;
        const std::uint64_t good_deadline = bus.now_ps() + cfg_.answer_timeout_ps;
        while (good_posted && done < 2 && bus.now_ps() < good_deadline) {
            int n = 0;
            wcs.clear();
            ctx.poll_cq(cq_good, 2, &wcs, &n);
            for (int i = 0; i < n; ++i) {
                ++done;
                if (wcs[static_cast<std::size_t>(i)].status == regmap::cqe_status::success)
                    ++good_ops_;
                else
                    ++good_errors_;
            }
            if (n == 0) bus.spend(cfg_.poll_interval_ps);
        }
        std::vector<std::uint8_t> back(len);
        bus.mem_read(buf + kGoodSink + off, back.data(), len);
        if (done != 2 || back != data) ++good_errors_;
        std::copy(data.begin(), data.end(), good_image_.begin() + static_cast<std::ptrdiff_t>(off));
        oob_.wait_for("judged-" + std::to_string(e));
        int n = 0;
        while (ctx.poll_cq(cq, 16, &wcs, &n) == drv::status::ok && n > 0) wcs.clear();
        ctx.destroy_qp(qp);
    }
    oob_.publish("peer-done", {});
    oob_.wait_for("target-done");
}

boost::json::object hostile::report() const {
    boost::json::object o;
    o["mode"] = cfg_.mode;
    o["episodes"] = episodes_.size();
    o["fpdus_sent"] = fpdus_sent_;
    o["good_fpdus_sent"] = good_fpdus_;
    o["violations_sent"] = violations_;
    o["bytes_outside_grants"] = bytes_outside_grants_;
    o["shadow_bytes"] = shadow_bytes_;
    // The driver's rings (ring_guard): device writes outside CQE slots and command answers (must be
    // 0), the allowed ones seen, and device writes outside the arena and every ring.
    o["ring_bytes_outside_grants"] = rings_.bytes_outside_grants();
    o["ring_bytes_written"] = rings_.allowed_bytes();
    o["device_bytes_elsewhere"] = rings_.bytes_elsewhere();
    o["memory_checked"] = checked_;
    std::uint64_t as_required = 0;
    boost::json::object classes;
    for (const auto& [name, c] : classes_) {
        classes[name] = {{"sent", c.sent}, {"as_required", c.as_required}, {"wrong", c.wrong}};
        as_required += c.as_required;
    }
    o["answered_as_required"] = as_required;
    o["answered_wrongly"] = wrong_ - std::min(wrong_, unanswered_);
    o["unanswered"] = unanswered_;
    o["classes"] = std::move(classes);
    boost::json::object outcomes;
    for (const auto& [name, n] : outcomes_) outcomes[name] = n;
    o["outcomes"] = std::move(outcomes);
    boost::json::array f;
    for (const std::string& s : findings_) f.push_back(boost::json::value(s));
    o["findings"] = std::move(f);
    if (target_.peer_frames) {
        // How the peer framed and cut its streams (workload.hostile.stream = peer).
        boost::json::object cuts;
        for (const auto& [name, n] : cuts_) cuts[name] = n;
        o["stream"] = {{"framed_by", "peer"},
                       {"segments", segments_},
                       {"fpdus_split", fpdus_split_},
                       {"segments_coalesced", segments_coalesced_},
                       {"ulpdus_over_mulpdu", over_mulpdu_},
                       {"cuts", std::move(cuts)}};
    }
    o["good_qp"] = {{"operations", good_ops_},
                    {"errors", good_errors_},
                    {"bytes_checked", good_bytes_checked_},
                    {"ok", good_errors_ == 0 && good_ops_ > 0}};
    return o;
}

}  // namespace rnic::platform
