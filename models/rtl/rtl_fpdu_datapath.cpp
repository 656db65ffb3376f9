// Drives the Verilated framing blocks clock by clock: inputs are written through direct_signal
// channels, the model is evaluated with the clock low and then high (one rising edge per cycle),
// and the registered outputs are read before the next edge. No SystemC time passes; the framer
// turns the cycle counts into delay.
#include "rtl/rtl_fpdu_datapath.h"

#include <stdexcept>
#include <vector>

#include <verilated.h>
#include <verilated_vcd_c.h>

#include "Vcrc32c_engine_w16.h"
#include "Vcrc32c_engine_w8.h"
#include "Vmpa_rx_datapath_w16.h"
#include "Vmpa_rx_datapath_w8.h"
#include "Vmpa_tx_datapath_w16.h"
#include "Vmpa_tx_datapath_w8.h"
#include "proto/bytes.h"
#include "rtl/direct_signal.h"

namespace rnic::rtl {

namespace mpa = proto::mpa;

// ---------------------------------------------------------------------------------------------
// Verilator keeps a SystemC model's eval_step() private: normally only its SC_METHOD calls it.
// Explicit template instantiation may name private members ([temp.explicit]), which lets us take
// the member pointer once, here, and call it from the clock loop.
// The grant and the tags share a (named) namespace, where the friend function lives.
namespace eval_access {
template <typename Tag, typename Tag::type Member>
struct eval_grant {
    friend typename Tag::type eval_member(Tag) { return Member; }
};
}  // namespace eval_access

#define RNIC_RTL_EVAL_ACCESS(Model)                                   \
    namespace eval_access {                                           \
    struct Model##_eval {                                             \
        using type = void (Model::*)();                               \
        friend type eval_member(Model##_eval);                        \
    };                                                                \
    template struct eval_grant<Model##_eval, &Model::eval_step>;      \
    }

RNIC_RTL_EVAL_ACCESS(Vcrc32c_engine_w8)
RNIC_RTL_EVAL_ACCESS(Vcrc32c_engine_w16)
RNIC_RTL_EVAL_ACCESS(Vmpa_tx_datapath_w8)
RNIC_RTL_EVAL_ACCESS(Vmpa_tx_datapath_w16)
RNIC_RTL_EVAL_ACCESS(Vmpa_rx_datapath_w8)
RNIC_RTL_EVAL_ACCESS(Vmpa_rx_datapath_w16)
#undef RNIC_RTL_EVAL_ACCESS

namespace {

template <int W>
struct widths;
template <>
struct widths<8> {
    using data_t = std::uint64_t;  // Verilator maps 33..64-bit ports to uint64_t
    using crc_t = Vcrc32c_engine_w8;
    using tx_t = Vmpa_tx_datapath_w8;
    using rx_t = Vmpa_rx_datapath_w8;
    using crc_eval = eval_access::Vcrc32c_engine_w8_eval;
    using tx_eval = eval_access::Vmpa_tx_datapath_w8_eval;
    using rx_eval = eval_access::Vmpa_rx_datapath_w8_eval;
    static data_t pack(const std::uint8_t* b, std::size_t n) {
        data_t v = 0;
        for (std::size_t i = 0; i < n; ++i) v |= data_t{b[i]} << (8 * i);
        return v;
    }
    static void unpack(const data_t& v, std::uint8_t* b, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(v >> (8 * i));
    }
};
template <>
struct widths<16> {
    using data_t = sc_dt::sc_bv<128>;  // and wider ports to sc_bv
    using crc_t = Vcrc32c_engine_w16;
    using tx_t = Vmpa_tx_datapath_w16;
    using rx_t = Vmpa_rx_datapath_w16;
    using crc_eval = eval_access::Vcrc32c_engine_w16_eval;
    using tx_eval = eval_access::Vmpa_tx_datapath_w16_eval;
    using rx_eval = eval_access::Vmpa_rx_datapath_w16_eval;
    static data_t pack(const std::uint8_t* b, std::size_t n) {
        std::uint8_t w[16] = {};
        for (std::size_t i = 0; i < n; ++i) w[i] = b[i];
        data_t v;
        for (int k = 0; k < 4; ++k) v.set_word(k, proto::get_le32(w + 4 * k));
        return v;
    }
    static void unpack(const data_t& v, std::uint8_t* b, std::size_t n) {
        std::uint8_t w[16];
        for (int k = 0; k < 4; ++k) proto::put_le32(w + 4 * k, v.get_word(k));
        for (std::size_t i = 0; i < n; ++i) b[i] = w[i];
    }
};

std::uint32_t low_lanes(std::size_t n) { return n >= 32 ? 0xFFFFFFFFu : (1u << n) - 1u; }
std::size_t lanes(std::uint32_t be) { return static_cast<std::size_t>(__builtin_popcount(be)); }

template <int W>
class rtl_datapath final : public rtl_fpdu_datapath {
    using T = widths<W>;
    using data_t = typename T::data_t;

public:
    explicit rtl_datapath(const rtl_datapath_options& opt)
        : crc_(new typename T::crc_t((opt.name + "_crc32c").c_str())),
          tx_(new typename T::tx_t((opt.name + "_tx").c_str())),
          rx_(new typename T::rx_t((opt.name + "_rx").c_str())),
          vcd_path_(opt.vcd_path),
          half_period_ps_(static_cast<std::uint64_t>(0.5e12 / opt.clock_hz)) {
        if (!opt.vcd_path.empty()) Verilated::traceEverOn(true);  // before the first eval
        bind();
        reset();
    }
    ~rtl_datapath() override {
        if (vcd_ && vcd_->isOpen()) vcd_->close();
    }

    datapath_model model() const override { return datapath_model::rtl; }
    std::uint32_t bytes_per_cycle() const override { return W; }
    std::uint64_t clock_cycles() const override { return cycles_; }

    datapath_cycles build_fpdu(const std::uint8_t* ulpdu, std::size_t len, bool crc, bool markers,
                               std::uint32_t stream_pos, std::vector<std::uint8_t>& out) override {
        if (len > mpa::kMaxUlpduLength) return {};
        // Header logic (not Verilated): ULPDU_Length in front, PAD behind (RFC 5044 §4.1).
        body_.clear();
        body_.push_back(static_cast<std::uint8_t>(len >> 8));
        body_.push_back(static_cast<std::uint8_t>(len));
        body_.insert(body_.end(), ulpdu, ulpdu + len);
        body_.insert(body_.end(), mpa::pad_length(len), std::uint8_t{0});

        const bool tracing = trace_tx_pending();
        if (tx_pos_.read() != stream_pos) {  // another connection's stream: load its position
            tx_load_.write(true);
            tx_load_pos_.write(stream_pos);
            tx_in_valid_.write(false);
            tick(*tx_, tx_clk_, tx_eval_);
            tx_load_.write(false);
        }
        tx_cfg_markers_.write(markers);
        tx_cfg_crc_.write(crc);

        datapath_cycles c;
        std::size_t next = 0;
        std::uint8_t word[W];
        while (true) {
            // Outputs of the current cycle (registered): the consumer takes them at the next edge.
            bool last = false;
            if (tx_out_valid_.read()) {
                const std::size_t n = lanes(tx_out_be_.read());
                T::unpack(tx_out_data_.read(), word, n);
                out.insert(out.end(), word, word + n);
                ++c.beats;
                last = tx_out_last_.read();
            }
            if (next < body_.size() && tx_in_ready_.read()) {
                const std::size_t n = std::min<std::size_t>(W, body_.size() - next);
                tx_in_data_.write(T::pack(body_.data() + next, n));
                tx_in_be_.write(low_lanes(n));
                tx_in_sof_.write(next == 0);
                tx_in_eof_.write(next + n == body_.size());
                tx_in_valid_.write(true);
                next += n;
            } else {
                tx_in_valid_.write(false);
            }
            tick(*tx_, tx_clk_, tx_eval_, tracing);
            ++c.latency;
            if (last) break;
            if (c.latency > stall_limit(body_.size())) stalled("transmit");
        }
        tx_in_valid_.write(false);
        if (tracing) traced_tx_ = true;
        return c;
    }

    datapath_cycles check_fpdu(const std::uint8_t* wire, std::size_t wire_len, bool crc, bool markers,
                               std::uint32_t stream_pos, fpdu_rx_result& r) override {
        r.error = mpa::DeframeError::none;
        r.ulpdu.clear();
        const bool tracing = trace_rx_pending();
        if (rx_pos_.read() != stream_pos) {
            rx_load_.write(true);
            rx_load_pos_.write(stream_pos);
            rx_in_valid_.write(false);
            tick(*rx_, rx_clk_, rx_eval_);
            rx_load_.write(false);
        }
        rx_cfg_markers_.write(markers);
        datapath_cycles c;
        std::size_t next = 0;
        bool done = false, last = false;
        std::uint8_t word[W];
        body_.clear();
        while (true) {
            // Registered outputs of this cycle; the packer lets them go at the edge below.
            if (rx_out_valid_.read()) {
                const std::size_t n = lanes(rx_out_be_.read());
                T::unpack(rx_out_data_.read(), word, n);
                body_.insert(body_.end(), word, word + n);
                last = last || rx_out_last_.read();
            }
            done = done || rx_done_.read();
            if (next < wire_len) {
                const std::size_t n = std::min<std::size_t>(W, wire_len - next);
                rx_in_data_.write(T::pack(wire + next, n));
                rx_in_be_.write(low_lanes(n));
                rx_in_sof_.write(next == 0);
                rx_in_len_.write(static_cast<std::uint32_t>(wire_len));
                rx_in_valid_.write(true);
                next += n;
                ++c.beats;
            } else {
                rx_in_valid_.write(false);
            }
            tick(*rx_, rx_clk_, rx_eval_, tracing);
            ++c.latency;
            if (done && last) break;
            if (c.latency > stall_limit(wire_len)) stalled("receive");
        }
        rx_in_valid_.write(false);
        if (tracing) traced_rx_ = true;
        r.crc_computed = rx_crc_calc_.read();
        r.crc_received = rx_crc_recv_.read();
        // ULPDU_Length, ULPDU, PAD came out; the ULPDU is what the length field says.
        const std::size_t ulpdu_len = body_.size() >= 2 ? proto::get_be16(body_.data()) : 0;
        if (body_.size() >= 2 + ulpdu_len) r.ulpdu.assign(body_.begin() + 2, body_.begin() + 2 + static_cast<std::ptrdiff_t>(ulpdu_len));
        if (crc && r.crc_computed != r.crc_received) {
            r.error = mpa::DeframeError::crc_mismatch;
        } else if (markers && rx_marker_bad_.read()) {
            // §8 code 3, judged once the CRC is good (like the software deframer).
            r.error = mpa::DeframeError::marker_invalid;
            r.bad_marker_pos = rx_bad_marker_pos_.read();
            r.bad_marker_ptr = static_cast<std::uint16_t>(rx_bad_marker_ptr_.read());
            const std::uint32_t len_pos = stream_pos % mpa::kMarkerInterval == 0 ? stream_pos + 4 : stream_pos;
            r.expected_ptr = r.bad_marker_pos == stream_pos ? 0 : static_cast<std::uint16_t>(r.bad_marker_pos - len_pos);
        }
        return c;
    }

    std::uint32_t crc32c(const std::uint8_t* data, std::size_t len, std::uint32_t lane,
                         datapath_cycles* cycles) override {
        lane %= W;
        std::vector<std::uint8_t> words;
        std::vector<std::uint32_t> be;
        std::size_t i = 0;
        while (i < len || words.empty()) {
            std::uint8_t w[W] = {};
            std::uint32_t mask = 0;
            for (std::size_t j = words.empty() ? lane : 0; j < W && i < len; ++j, ++i) {
                w[j] = data[i];
                mask |= 1u << j;
            }
            words.insert(words.end(), w, w + W);
            be.push_back(mask);
        }
        return crc32c_words(words.data(), be.data(), be.size(), cycles);
    }

    std::uint32_t crc32c_words(const std::uint8_t* data, const std::uint32_t* be, std::size_t nwords,
                               datapath_cycles* cycles) override {
        for (std::size_t i = 0; i < nwords; ++i) {
            crc_in_valid_.write(true);
            crc_in_sop_.write(i == 0);
            crc_in_data_.write(T::pack(data + i * W, W));
            crc_in_be_.write(be[i]);
            tick(*crc_, crc_clk_, crc_eval_);
        }
        crc_in_valid_.write(false);
        crc_in_sop_.write(false);
        if (nwords == 0) {  // the empty message: preset, then read
            crc_clear_.write(true);
            tick(*crc_, crc_clk_, crc_eval_);
            crc_clear_.write(false);
        }
        if (cycles != nullptr) *cycles = {nwords, nwords};
        return crc_crc_.read();
    }

private:
    // A block that never finishes its FPDU is an RTL bug, not something the wire can cause.
    static std::uint64_t stall_limit(std::size_t bytes) { return 2 * (bytes / W) + 64; }
    [[noreturn]] static void stalled(const char* what) {
        throw std::logic_error(std::string("RTL ") + what + " datapath did not finish its FPDU");
    }

    bool trace_tx_pending() { return open_vcd() && !traced_tx_; }
    bool trace_rx_pending() { return open_vcd() && !traced_rx_; }
    // A Verilated SystemC model may be traced only once elaboration is complete, so the VCD is
    // opened with the first FPDU (inside the simulation), not in the constructor.
    bool open_vcd() {
        if (vcd_path_.empty()) return false;
        if (!vcd_) {
            if (!sc_core::sc_get_curr_simcontext()->elaboration_done()) return false;
            vcd_ = std::make_unique<VerilatedVcdC>();
            tx_->trace(vcd_.get(), 99);
            rx_->trace(vcd_.get(), 99);
            vcd_->open(vcd_path_.c_str());
            if (!vcd_->isOpen()) throw std::runtime_error("cannot write the RTL VCD " + vcd_path_);
        }
        if (traced_tx_ && traced_rx_ && vcd_->isOpen()) vcd_->close();  // one FPDU each way is enough
        return vcd_->isOpen();
    }

    template <typename Model, typename Tag>
    void eval(Model& m, Tag tag) {
        (m.*eval_member(tag))();
    }

    // One clock: evaluate with the clock low (inputs settle), then high (the rising edge).
    template <typename Model, typename Tag>
    void tick(Model& m, direct_signal<bool>& clk, Tag tag, bool trace = false) {
        clk.write(false);
        eval(m, tag);
        if (trace) vcd_->dump(vcd_time_);
        vcd_time_ += half_period_ps_;
        clk.write(true);
        eval(m, tag);
        if (trace) vcd_->dump(vcd_time_);
        vcd_time_ += half_period_ps_;
        ++cycles_;
    }

    void bind() {
        crc_->clk(crc_clk_);
        crc_->rst_n(crc_rst_n_);
        crc_->clear(crc_clear_);
        crc_->in_valid(crc_in_valid_);
        crc_->in_sop(crc_in_sop_);
        crc_->in_data(crc_in_data_);
        crc_->in_be(crc_in_be_);
        crc_->crc(crc_crc_);
        crc_->residue(crc_residue_);

        tx_->clk(tx_clk_);
        tx_->rst_n(tx_rst_n_);
        tx_->load(tx_load_);
        tx_->load_pos(tx_load_pos_);
        tx_->cfg_markers(tx_cfg_markers_);
        tx_->cfg_crc(tx_cfg_crc_);
        tx_->in_valid(tx_in_valid_);
        tx_->in_ready(tx_in_ready_);
        tx_->in_data(tx_in_data_);
        tx_->in_be(tx_in_be_);
        tx_->in_sof(tx_in_sof_);
        tx_->in_eof(tx_in_eof_);
        tx_->out_valid(tx_out_valid_);
        tx_->out_data(tx_out_data_);
        tx_->out_be(tx_out_be_);
        tx_->out_last(tx_out_last_);
        tx_->pos(tx_pos_);
        tx_->idle(tx_idle_);

        rx_->clk(rx_clk_);
        rx_->rst_n(rx_rst_n_);
        rx_->load(rx_load_);
        rx_->load_pos(rx_load_pos_);
        rx_->cfg_markers(rx_cfg_markers_);
        rx_->in_valid(rx_in_valid_);
        rx_->in_data(rx_in_data_);
        rx_->in_be(rx_in_be_);
        rx_->in_sof(rx_in_sof_);
        rx_->in_len(rx_in_len_);
        rx_->out_valid(rx_out_valid_);
        rx_->out_data(rx_out_data_);
        rx_->out_be(rx_out_be_);
        rx_->out_last(rx_out_last_);
        rx_->done(rx_done_);
        rx_->crc_calc(rx_crc_calc_);
        rx_->crc_recv(rx_crc_recv_);
        rx_->marker_bad(rx_marker_bad_);
        rx_->bad_marker_pos(rx_bad_marker_pos_);
        rx_->bad_marker_ptr(rx_bad_marker_ptr_);
        rx_->markers_seen(rx_markers_seen_);
        rx_->pos(rx_pos_);
    }

    // The asynchronous resets need a falling edge that the model sees: high, low, high.
    void reset() {
        for (bool level : {true, false, true}) {
            crc_rst_n_.write(level);
            tx_rst_n_.write(level);
            rx_rst_n_.write(level);
            eval(*crc_, typename T::crc_eval{});
            eval(*tx_, typename T::tx_eval{});
            eval(*rx_, typename T::rx_eval{});
        }
    }

    // The Verilated modules are sc_modules owned by the SystemC hierarchy's parent; we keep them
    // alive as long as the datapath.
    std::unique_ptr<typename T::crc_t> crc_;
    std::unique_ptr<typename T::tx_t> tx_;
    std::unique_ptr<typename T::rx_t> rx_;
    typename T::crc_eval crc_eval_{};
    typename T::tx_eval tx_eval_{};
    typename T::rx_eval rx_eval_{};

    direct_signal<bool> crc_clk_, crc_rst_n_, crc_clear_, crc_in_valid_, crc_in_sop_;
    direct_signal<data_t> crc_in_data_;
    direct_signal<std::uint32_t> crc_in_be_, crc_crc_, crc_residue_;

    direct_signal<bool> tx_clk_, tx_rst_n_, tx_load_, tx_cfg_markers_, tx_cfg_crc_, tx_in_valid_, tx_in_ready_,
        tx_in_sof_, tx_in_eof_, tx_out_valid_, tx_out_last_, tx_idle_;
    direct_signal<data_t> tx_in_data_, tx_out_data_;
    direct_signal<std::uint32_t> tx_load_pos_, tx_in_be_, tx_out_be_, tx_pos_;

    direct_signal<bool> rx_clk_, rx_rst_n_, rx_load_, rx_cfg_markers_, rx_in_valid_, rx_in_sof_, rx_out_valid_,
        rx_out_last_, rx_done_, rx_marker_bad_;
    direct_signal<data_t> rx_in_data_, rx_out_data_;
    direct_signal<std::uint32_t> rx_load_pos_, rx_in_be_, rx_in_len_, rx_out_be_, rx_crc_calc_, rx_crc_recv_,
        rx_bad_marker_pos_, rx_bad_marker_ptr_, rx_markers_seen_, rx_pos_;

    std::vector<std::uint8_t> body_;
    std::uint64_t cycles_ = 0;
    std::string vcd_path_;
    std::unique_ptr<VerilatedVcdC> vcd_;
    std::uint64_t vcd_time_ = 0;
    const std::uint64_t half_period_ps_;
    bool traced_tx_ = false, traced_rx_ = false;
};

}  // namespace

bool rtl_width_supported(std::uint32_t bytes_per_cycle) { return bytes_per_cycle == 8 || bytes_per_cycle == 16; }

std::unique_ptr<rtl_fpdu_datapath> make_rtl_datapath(const rtl_datapath_options& options) {
    switch (options.bytes_per_cycle) {
        case 8: return std::make_unique<rtl_datapath<8>>(options);
        case 16: return std::make_unique<rtl_datapath<16>>(options);
        default:
            throw std::invalid_argument("no RTL framing datapath of " + std::to_string(options.bytes_per_cycle) +
                                        " bytes per cycle (Verilated widths: 8, 16)");
    }
}

}  // namespace rnic::rtl
