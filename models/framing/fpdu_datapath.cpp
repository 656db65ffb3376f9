#include "framing/fpdu_datapath.h"

#include <cstdio>

#include "proto/bytes.h"
#include "proto/crc32c.h"

namespace rnic {

namespace mpa = proto::mpa;

namespace {

constexpr std::uint32_t kInterval = static_cast<std::uint32_t>(mpa::kMarkerInterval);

std::uint64_t words(std::size_t bytes, std::uint32_t width) {
    return (bytes + width - 1) / width;
}

// FPDUPTR a Marker at `marker_pos` must carry inside the FPDU that starts at `fpdu_pos`
// (RFC 5044 §4.3): 0 for a Marker at the FPDU's first position, else the distance back to
// ULPDU_Length, which sits behind that leading Marker when there is one.
std::uint16_t expected_fpduptr(std::uint32_t marker_pos, std::uint32_t fpdu_pos) {
    if (marker_pos == fpdu_pos) return 0;
    const std::uint32_t len_pos = fpdu_pos % kInterval == 0 ? fpdu_pos + 4 : fpdu_pos;
    return static_cast<std::uint16_t>(marker_pos - len_pos);
}

class tlm_datapath final : public fpdu_datapath {
public:
    explicit tlm_datapath(std::uint32_t width) : width_(width) {}
    datapath_model model() const override { return datapath_model::tlm; }
    std::uint32_t bytes_per_cycle() const override { return width_; }

    datapath_cycles build_fpdu(const std::uint8_t* ulpdu, std::size_t len, bool crc, bool markers,
                               std::uint32_t stream_pos, std::vector<std::uint8_t>& out) override {
        const std::size_t before = out.size();
        mpa::build_fpdu(ulpdu, len, crc, markers, stream_pos, out);
        const std::uint64_t beats = words(out.size() - before, width_);
        return {beats, beats};
    }

    datapath_cycles check_fpdu(const std::uint8_t* wire, std::size_t wire_len, bool crc, bool markers,
                               std::uint32_t stream_pos, fpdu_rx_result& r) override {
        r = fpdu_rx_result{};
        r.ulpdu.clear();
        mpa::deframer::config cfg;
        cfg.markers = markers;
        cfg.crc = crc;
        cfg.stream_pos = stream_pos;
        mpa::deframer d(cfg, [&r](const std::uint8_t* u, std::size_t n) { r.ulpdu.assign(u, u + n); });
        r.error = d.feed(wire, wire_len);
        if (wire_len >= mpa::kCrcSize) {
            r.crc_computed = proto::crc32c(wire, wire_len - mpa::kCrcSize);
            r.crc_received = proto::get_le32(wire + wire_len - mpa::kCrcSize);
        }
        if (r.error == mpa::deframe_error::marker_invalid) {
            for (std::uint32_t off = (kInterval - stream_pos % kInterval) % kInterval; off + 4 <= wire_len;
                 off += kInterval) {
                const std::uint16_t ptr = proto::get_be16(wire + off + 2);
                const std::uint16_t want = expected_fpduptr(stream_pos + off, stream_pos);
                if ((ptr & 0xFFFC) != (want & 0xFFFC)) {
                    r.bad_marker_pos = stream_pos + off;
                    r.bad_marker_ptr = ptr;
                    r.expected_ptr = want;
                    break;
                }
            }
        }
        const std::uint64_t beats = words(wire_len, width_);
        return {beats, beats};
    }

    std::uint32_t crc32c(const std::uint8_t* data, std::size_t len, std::uint32_t lane,
                         datapath_cycles* cycles) override {
        if (cycles != nullptr) *cycles = {words(len + lane, width_), words(len + lane, width_)};
        return proto::crc32c(data, len);
    }

private:
    std::uint32_t width_;
};

template <typename... Args>
std::string format(const char* fmt, Args... args) {
    char buf[256];
    std::snprintf(buf, sizeof buf, fmt, args...);
    return buf;
}

}  // namespace

std::unique_ptr<fpdu_datapath> make_tlm_datapath(std::uint32_t bytes_per_cycle) {
    return std::make_unique<tlm_datapath>(bytes_per_cycle);
}

datapath_deframer::datapath_deframer(fpdu_datapath& datapath, const mpa::deframer::config& cfg, sink_fn sink)
    : dp_(datapath), cfg_(cfg), sink_(std::move(sink)), pos_(cfg.stream_pos) {}

mpa::deframe_error datapath_deframer::feed(const std::uint8_t* data, std::size_t len) {
    if (error_ != mpa::deframe_error::none) return error_;
    pending_.insert(pending_.end(), data, data + len);
    std::size_t off = 0;
    while (true) {
        // ULPDU_Length sits at the FPDU start, or behind a leading Marker (RFC 5044 §4.3). MPA
        // positions are multiples of 4, so the 2-byte field never straddles a Marker.
        const std::size_t header = cfg_.markers && pos_ % kInterval == 0 ? mpa::kMarkerSize : 0;
        if (pending_.size() - off < header + mpa::kLengthFieldSize) break;
        const std::size_t ulpdu_len = proto::get_be16(pending_.data() + off + header);
        if (ulpdu_len > cfg_.max_ulpdu) {
            error_ = mpa::deframe_error::ulpdu_too_long;
            error_detail_ = format("ULPDU_Length %zu of the FPDU starting at stream byte %llu exceeds the maximum %zu",
                                   ulpdu_len, static_cast<unsigned long long>(consumed_), cfg_.max_ulpdu);
            break;
        }
        const std::size_t wire = mpa::fpdu_wire_length(ulpdu_len, cfg_.markers, pos_);
        if (pending_.size() - off < wire) break;
        const datapath_cycles cycles =
            dp_.check_fpdu(pending_.data() + off, wire, cfg_.crc, cfg_.markers, pos_, result_);
        if (result_.error == mpa::deframe_error::crc_mismatch) {
            error_ = result_.error;
            error_detail_ = format(
                "CRC mismatch in the FPDU starting at stream byte %llu (ULPDU_Length %zu): "
                "received 0x%08x, computed 0x%08x",
                static_cast<unsigned long long>(consumed_), ulpdu_len, static_cast<unsigned>(result_.crc_received),
                static_cast<unsigned>(result_.crc_computed));
            break;
        }
        if (result_.error != mpa::deframe_error::none) {
            error_ = result_.error;
            error_detail_ = format(
                "Marker at marker-space position %u has FPDUPTR %u, expected %u for the FPDU "
                "starting at stream byte %llu",
                static_cast<unsigned>(result_.bad_marker_pos), static_cast<unsigned>(result_.bad_marker_ptr & 0xFFFC),
                static_cast<unsigned>(result_.expected_ptr & 0xFFFC), static_cast<unsigned long long>(consumed_));
            break;
        }
        off += wire;
        pos_ += static_cast<std::uint32_t>(wire);
        consumed_ += wire;
        ++fpdus_;
        sink_(result_.ulpdu.data(), result_.ulpdu.size(), cycles);
    }
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(off));
    return error_;
}

}  // namespace rnic
