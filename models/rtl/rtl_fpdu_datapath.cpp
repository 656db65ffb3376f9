// Drives the Verilated framing blocks clock by clock, one FPDU per call, in a plain C++ loop: the
// models are Verilator's C++ output (no SystemC), their ports are plain members written and read
// directly, and each clock is the model evaluated with the clock low and then high (one rising
// edge), the registered outputs read before the next edge. No SystemC time passes and nothing is
// scheduled; the framer turns the cycle counts into delay.
#include "rtl/rtl_fpdu_datapath.h"

#include <cstring>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include <verilated.h>
#include <verilated_vcd_c.h>

#include "Vcrc32c_engine_w16.h"
#include "Vcrc32c_engine_w16___024root.h"
#include "Vcrc32c_engine_w8.h"
#include "Vcrc32c_engine_w8___024root.h"
#include "Vmpa_rx_datapath_w16.h"
#include "Vmpa_rx_datapath_w16___024root.h"
#include "Vmpa_rx_datapath_w8.h"
#include "Vmpa_rx_datapath_w8___024root.h"
#include "Vmpa_tx_datapath_w16.h"
#include "Vmpa_tx_datapath_w16___024root.h"
#include "Vmpa_tx_datapath_w8.h"
#include "Vmpa_tx_datapath_w8___024root.h"
#include "proto/bytes.h"

namespace rnic::rtl {

namespace mpa = proto::mpa;

namespace {

// The models of one bus width. Verilator gives a port of 33..64 bits as a QData (uint64_t) and a
// wider one as a VlWide of 32-bit words, least significant first; lane 0 is the low byte.
template <int W>
struct widths;
template <>
struct widths<8> {
    using crc_t = Vcrc32c_engine_w8;
    using tx_t = Vmpa_tx_datapath_w8;
    using rx_t = Vmpa_rx_datapath_w8;
    static void put(QData& port, const std::uint8_t* b, std::size_t n) {
        QData v = 0;
        for (std::size_t i = 0; i < n; ++i) v |= QData{b[i]} << (8 * i);
        port = v;
    }
    static void get(const QData& port, std::uint8_t* b, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(port >> (8 * i));
    }
};
template <>
struct widths<16> {
    using crc_t = Vcrc32c_engine_w16;
    using tx_t = Vmpa_tx_datapath_w16;
    using rx_t = Vmpa_rx_datapath_w16;
    static void put(VlWide<4>& port, const std::uint8_t* b, std::size_t n) {
        std::uint8_t w[16] = {};
        std::memcpy(w, b, n);
        for (int k = 0; k < 4; ++k) port[k] = proto::get_le32(w + 4 * k);
    }
    static void get(const VlWide<4>& port, std::uint8_t* b, std::size_t n) {
        std::uint8_t w[16];
        for (int k = 0; k < 4; ++k) proto::put_le32(w + 4 * k, port[k]);
        std::memcpy(b, w, n);
    }
};

// Whether the model's root records the clock's previous level where tick() can set it.
template <typename Model, typename = void>
struct single_eval : std::false_type {};
template <typename Model>
struct single_eval<Model, std::void_t<decltype(std::declval<Model&>().rootp->__Vtrigrprev__TOP__clk)>>
    : std::true_type {};

std::uint32_t low_lanes(std::size_t n) {
    return n >= 32 ? 0xFFFFFFFFu : (1u << n) - 1u;
}
std::size_t lanes(std::uint32_t be) {
    return static_cast<std::size_t>(__builtin_popcount(be));
}

template <int W>
class rtl_datapath final : public rtl_fpdu_datapath {
    using types = widths<W>;

public:
    explicit rtl_datapath(const rtl_datapath_options& opt)
        : trace_on_(enable_trace(opt)),
          crc_(std::make_unique<typename types::crc_t>((opt.name + "_crc32c").c_str())),
          tx_(std::make_unique<typename types::tx_t>((opt.name + "_tx").c_str())),
          rx_(std::make_unique<typename types::rx_t>((opt.name + "_rx").c_str())),
          vcd_path_(opt.vcd_path),
          half_period_ps_(static_cast<std::uint64_t>(0.5e12 / opt.clock_hz)) {
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

        auto& m = *tx_;
        const bool tracing = trace_tx_pending();
        if (m.pos != stream_pos) {  // another connection's stream: load its position
            m.load = 1;
            m.load_pos = stream_pos;
            m.in_valid = 0;
            tick(m);
            m.load = 0;
        }
        m.cfg_markers = markers;
        m.cfg_crc = crc;

        datapath_cycles c;
        std::size_t next = 0;
        std::uint8_t word[W];
        while (true) {
            // Outputs of the current cycle (registered): the consumer takes them at the next edge.
            bool last = false;
            if (m.out_valid) {
                const std::size_t n = lanes(m.out_be);
                types::get(m.out_data, word, n);
                out.insert(out.end(), word, word + n);
                ++c.beats;
                last = m.out_last;
            }
            if (next < body_.size() && m.in_ready) {
                const std::size_t n = std::min<std::size_t>(W, body_.size() - next);
                types::put(m.in_data, body_.data() + next, n);
                m.in_be = low_lanes(n);
                m.in_sof = next == 0;
                m.in_eof = next + n == body_.size();
                m.in_valid = 1;
                next += n;
            } else {
                m.in_valid = 0;
            }
            tick(m, tracing);
            ++c.latency;
            if (last) break;
            if (c.latency > stall_limit(body_.size())) stalled("transmit");
        }
        m.in_valid = 0;
        if (tracing) traced_tx_ = true;
        return c;
    }

    datapath_cycles check_fpdu(const std::uint8_t* wire, std::size_t wire_len, bool crc, bool markers,
                               std::uint32_t stream_pos, fpdu_rx_result& r) override {
        r.error = mpa::deframe_error::none;
        r.ulpdu.clear();
        auto& m = *rx_;
        const bool tracing = trace_rx_pending();
        if (m.pos != stream_pos) {
            m.load = 1;
            m.load_pos = stream_pos;
            m.in_valid = 0;
            tick(m);
            m.load = 0;
        }
        m.cfg_markers = markers;
        datapath_cycles c;
        std::size_t next = 0;
        bool done = false, last = false;
        std::uint8_t word[W];
        body_.clear();
        while (true) {
            // Registered outputs of this cycle; the packer lets them go at the edge below.
            if (m.out_valid) {
                const std::size_t n = lanes(m.out_be);
                types::get(m.out_data, word, n);
                body_.insert(body_.end(), word, word + n);
                last = last || m.out_last;
            }
            done = done || m.done;
            if (next < wire_len) {
                const std::size_t n = std::min<std::size_t>(W, wire_len - next);
                types::put(m.in_data, wire + next, n);
                m.in_be = low_lanes(n);
                m.in_sof = next == 0;
                m.in_len = static_cast<std::uint32_t>(wire_len);
                m.in_valid = 1;
                next += n;
                ++c.beats;
            } else {
                m.in_valid = 0;
            }
            tick(m, tracing);
            ++c.latency;
            if (done && last) break;
            if (c.latency > stall_limit(wire_len)) stalled("receive");
        }
        m.in_valid = 0;
        if (tracing) traced_rx_ = true;
        r.crc_computed = m.crc_calc;
        r.crc_received = m.crc_recv;
        // ULPDU_Length, ULPDU, PAD came out; the ULPDU is what the length field says.
        const std::size_t ulpdu_len = body_.size() >= 2 ? proto::get_be16(body_.data()) : 0;
        if (body_.size() >= 2 + ulpdu_len)
            r.ulpdu.assign(body_.begin() + 2, body_.begin() + 2 + static_cast<std::ptrdiff_t>(ulpdu_len));
        if (crc && r.crc_computed != r.crc_received) {
            r.error = mpa::deframe_error::crc_mismatch;
        } else if (markers && m.marker_bad) {
            // §8 code 3, judged once the CRC is good (like the software deframer).
            r.error = mpa::deframe_error::marker_invalid;
            r.bad_marker_pos = m.bad_marker_pos;
            r.bad_marker_ptr = static_cast<std::uint16_t>(m.bad_marker_ptr);
            const std::uint32_t len_pos = stream_pos % mpa::kMarkerInterval == 0 ? stream_pos + 4 : stream_pos;
            r.expected_ptr =
                r.bad_marker_pos == stream_pos ? 0 : static_cast<std::uint16_t>(r.bad_marker_pos - len_pos);
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
        auto& m = *crc_;
        for (std::size_t i = 0; i < nwords; ++i) {
            m.in_valid = 1;
            m.in_sop = i == 0;
            types::put(m.in_data, data + i * W, W);
            m.in_be = be[i];
            tick(m);
        }
        m.in_valid = 0;
        m.in_sop = 0;
        if (nwords == 0) {  // the empty message: preset, then read
            m.clear = 1;
            tick(m);
            m.clear = 0;
        }
        if (cycles != nullptr) *cycles = {nwords, nwords};
        return m.crc;
    }

private:
    // A block that never finishes its FPDU is an RTL bug, not something the wire can cause.
    static std::uint64_t stall_limit(std::size_t bytes) { return 2 * (bytes / W) + 64; }
    [[noreturn]] static void stalled(const char* what) {
        throw std::logic_error(std::string("RTL ") + what + " datapath did not finish its FPDU");
    }

    // Tracing must be switched on before the models are built (their trace code is set up then).
    static bool enable_trace(const rtl_datapath_options& opt) {
        if (opt.vcd_path.empty()) return false;
        Verilated::traceEverOn(true);
        return true;
    }
    bool trace_tx_pending() { return open_vcd() && !traced_tx_; }
    bool trace_rx_pending() { return open_vcd() && !traced_rx_; }
    // The VCD is opened with the first FPDU, so a run that frames nothing writes no file.
    bool open_vcd() {
        if (!trace_on_) return false;
        if (!vcd_) {
            vcd_ = std::make_unique<VerilatedVcdC>();
            tx_->trace(vcd_.get(), 99);
            rx_->trace(vcd_.get(), 99);
            vcd_->open(vcd_path_.c_str());
            if (!vcd_->isOpen()) throw std::runtime_error("cannot write the RTL VCD " + vcd_path_);
        }
        if (traced_tx_ && traced_rx_ && vcd_->isOpen()) vcd_->close();  // one FPDU each way is enough
        return vcd_->isOpen();
    }

    // One clock. Traced: the model evaluated with the clock low (inputs settle), then high (the
    // rising edge), a VCD sample after each. Untraced, the low evaluation is left out: all it does
    // is settle the combinational logic on the new inputs, which the high evaluation does again
    // before its edge (Verilator evaluates the input-driven logic first in every eval()), and let
    // the model record the clock as low, which is what makes the next high an edge. So the clock
    // is left high and the recorded previous level is set low instead: one evaluation per clock,
    // the same edge with the same inputs, a quarter of the run's time saved. The recorded level is
    // a member of Verilator's generated root (5.x names it __Vtrigrprev__TOP__clk); where a
    // Verilator names it otherwise, single_eval<> is false and both evaluations run.
    template <typename Model>
    void tick(Model& m, bool trace = false) {
        if constexpr (single_eval<Model>::value) {
            if (!trace) {
                m.clk = 1;
                m.rootp->__Vtrigrprev__TOP__clk = 0;
                m.eval();
                vcd_time_ += 2 * half_period_ps_;
                ++cycles_;
                return;
            }
        }
        m.clk = 0;
        m.eval();
        if (trace) vcd_->dump(vcd_time_);
        vcd_time_ += half_period_ps_;
        m.clk = 1;
        m.eval();
        if (trace) vcd_->dump(vcd_time_);
        vcd_time_ += half_period_ps_;
        ++cycles_;
    }

    // The asynchronous resets need a falling edge that the model sees: high, low, high.
    void reset() {
        for (int level : {1, 0, 1}) {
            crc_->rst_n = level;
            tx_->rst_n = level;
            rx_->rst_n = level;
            crc_->eval();
            tx_->eval();
            rx_->eval();
        }
    }

    const bool trace_on_;
    std::unique_ptr<typename types::crc_t> crc_;
    std::unique_ptr<typename types::tx_t> tx_;
    std::unique_ptr<typename types::rx_t> rx_;

    std::vector<std::uint8_t> body_;
    std::uint64_t cycles_ = 0;
    std::string vcd_path_;
    std::unique_ptr<VerilatedVcdC> vcd_;
    std::uint64_t vcd_time_ = 0;
    const std::uint64_t half_period_ps_;
    bool traced_tx_ = false, traced_rx_ = false;
};

}  // namespace

bool rtl_width_supported(std::uint32_t bytes_per_cycle) {
    return bytes_per_cycle == 8 || bytes_per_cycle == 16;
}

std::unique_ptr<rtl_fpdu_datapath> make_rtl_datapath(const rtl_datapath_options& options) {
    switch (options.bytes_per_cycle) {
    case 8:
        return std::make_unique<rtl_datapath<8>>(options);
    case 16:
        return std::make_unique<rtl_datapath<16>>(options);
    default:
        throw std::invalid_argument("no RTL framing datapath of " + std::to_string(options.bytes_per_cycle) +
                                    " bytes per cycle (Verilated widths: 8, 16)");
    }
}

}  // namespace rnic::rtl
