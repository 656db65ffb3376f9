#include "framing/mpa_framing.h"

#include <utility>

#include "proto/mpa.h"

namespace rnic {

namespace mpa = proto::mpa;

namespace {

std::uint64_t words(std::size_t bytes, std::uint32_t width) {
    return (bytes + width - 1) / width;
}

mpa::deframer::config deframer_config(const frame_options& options, std::uint32_t pos) {
    mpa::deframer::config cfg;
    cfg.markers = options.markers;
    cfg.crc = options.crc;
    cfg.stream_pos = pos;
    cfg.max_ulpdu = mpa::kMaxUlpduLength;
    return cfg;
}

deframe_status status_of(mpa::deframe_error e) {
    if (e == mpa::deframe_error::none) return deframe_status::ok;
    // RFC 5044 §8: code 2 is a CRC error; a bad Marker or an impossible ULPDU_Length (code 3) means
    // the FPDUs can no longer be delineated.
    return e == mpa::deframe_error::crc_mismatch ? deframe_status::crc_error : deframe_status::framing_error;
}

// The TLM datapath: the codec's Deframer checks the FPDUs as the bytes arrive; the datapath's cost
// follows from each FPDU's wire length (one bus word per cycle, as the RTL measures it). The
// codec's sink for FPDUs from position `pos` on, charging each and passing it to `sink`.
mpa::deframer::sink_fn charged(const frame_options& options, std::uint32_t pos, std::uint32_t width, frame_sink sink) {
    return [markers = options.markers, next = pos, width, sink = std::move(sink)](const std::uint8_t* ulpdu,
                                                                                  std::size_t len) mutable {
        const std::size_t wire = mpa::fpdu_wire_length(len, markers, next);
        next += static_cast<std::uint32_t>(wire);
        const std::uint64_t beats = words(wire, width);
        sink(ulpdu, len, {beats, beats});
    };
}

class codec_deframer final : public frame_deframer {
public:
    codec_deframer(const frame_options& options, std::uint32_t width, frame_sink sink)
        : deframer_(deframer_config(options, 0), charged(options, 0, width, std::move(sink))) {}
    deframe_status feed(const std::uint8_t* data, std::size_t len) override {
        return status_of(deframer_.feed(data, len));
    }
    std::string error_name() const override { return mpa::to_string(deframer_.error()); }
    const std::string& error_detail() const override { return deframer_.error_detail(); }

private:
    mpa::deframer deframer_;
};

// The RTL datapath: whole FPDUs are delineated in C++ and checked clock by clock.
class datapath_frame_deframer final : public frame_deframer {
public:
    datapath_frame_deframer(fpdu_datapath& datapath, const frame_options& options, frame_sink sink)
        : deframer_(datapath, deframer_config(options, 0), std::move(sink)) {}
    deframe_status feed(const std::uint8_t* data, std::size_t len) override {
        return status_of(deframer_.feed(data, len));
    }
    std::string error_name() const override { return mpa::to_string(deframer_.error()); }
    const std::string& error_detail() const override { return deframer_.error_detail(); }

private:
    datapath_deframer deframer_;
};

}  // namespace

mpa_framing::mpa_framing(std::unique_ptr<fpdu_datapath> datapath) : datapath_(std::move(datapath)) {}

std::size_t mpa_framing::tx_room(std::size_t ulpdu_len) const {
    return marker_bound(ulpdu_len);
}

std::size_t mpa_framing::marker_bound(std::size_t ulpdu_len) {
    // ULPDU_Length, at most 3 PAD bytes and the CRC (§4.1), and room for a Marker per 512 bytes of
    // the ULPDU plus two more (a leading one, and one the 9 framing bytes may cross): Markers or
    // not, the bound the RDMA engine waited for before the framing was one interface.
    return mpa::kLengthFieldSize + 3 + mpa::kCrcSize + mpa::kMarkerSize * (ulpdu_len / mpa::kMarkerInterval + 2);
}

std::size_t mpa_framing::wire_length(std::size_t ulpdu_len, const frame_options& options, std::uint32_t pos) const {
    return mpa::fpdu_wire_length(ulpdu_len, options.markers, pos);
}

datapath_cycles mpa_framing::build(const std::uint8_t* ulpdu, std::size_t len, const frame_options& options,
                                   std::uint32_t pos, std::vector<std::uint8_t>& out) {
    return datapath_->build_fpdu(ulpdu, len, options.crc, options.markers, pos, out);
}

void mpa_framing::reframe(const std::uint8_t* ulpdu, std::size_t len, const frame_options& options, std::uint32_t pos,
                          std::vector<std::uint8_t>& out) const {
    // Both datapaths build the codec's bytes (tests/rtl), so the codec stands for either.
    mpa::build_fpdu(ulpdu, len, options.crc, options.markers, pos, out);
}

bool mpa_framing::placement_breaks(const frame_options& options, std::uint32_t frame_pos, std::size_t header_len,
                                   std::size_t payload_len, std::vector<std::uint32_t>* breaks) const {
    if (!options.markers) return false;
    *breaks =
        mpa::marker_breaks(mpa::ulpdu_byte_position(frame_pos, header_len), static_cast<std::uint32_t>(payload_len));
    return true;
}

std::unique_ptr<frame_deframer> mpa_framing::make_deframer(const frame_options& options, frame_sink sink) {
    if (datapath_->model() == datapath_model::tlm) {
        return std::make_unique<codec_deframer>(options, datapath_->bytes_per_cycle(), std::move(sink));
    }
    return std::make_unique<datapath_frame_deframer>(*datapath_, options, std::move(sink));
}

bool mpa_framing::deframe_whole(const frame_options& options, std::uint32_t pos, const std::uint8_t* data,
                                std::size_t len, const frame_sink& sink) {
    const mpa::deframer::config cfg = deframer_config(options, pos);
    if (datapath_->model() == datapath_model::tlm) {
        mpa::deframer probe(cfg, charged(options, pos, datapath_->bytes_per_cycle(), sink));
        return probe.feed(data, len) == mpa::deframe_error::none;
    }
    datapath_deframer probe(*datapath_, cfg, sink);
    return probe.feed(data, len) == mpa::deframe_error::none;
}

bool mpa_framing::locate_frame(const frame_options& options, const std::uint8_t* data, std::size_t len,
                               std::uint32_t pos, std::uint32_t* start) const {
    if (!options.markers) return false;
    // RFC 5044 §4.3: each Marker's FPDUPTR points back at the FPDU it belongs to.
    constexpr std::uint32_t kInterval = static_cast<std::uint32_t>(mpa::kMarkerInterval);
    std::uint32_t m = (pos + kInterval - 1) / kInterval * kInterval;  // first marker at or after pos
    for (; static_cast<std::uint64_t>(m - pos) + mpa::kMarkerSize <= len; m += kInterval) {
        const std::size_t at = m - pos;
        const std::uint32_t fpduptr = static_cast<std::uint32_t>(data[at + 2]) << 8 | data[at + 3];
        // FPDUPTR 0: the Marker leads its FPDU; otherwise it points back at the ULPDU_Length field.
        if (fpduptr > m) continue;
        std::uint32_t s = fpduptr == 0 ? m : m - fpduptr;
        // An FPDU whose ULPDU_Length follows a leading Marker begins at that Marker (the CRC covers it).
        if (fpduptr != 0 && s >= 4 && (s - 4) % kInterval == 0) s -= 4;
        if (s < pos) continue;  // that FPDU began before these bytes
        *start = s;
        return true;
    }
    return false;
}

std::size_t mpa_framing::split_frame_reach(const frame_options& options) const {
    // The TLM datapath only: a probe through the RTL datapath would run its clocks for bytes that
    // mostly come to nothing.
    if (!options.markers || datapath_->model() != datapath_model::tlm) return 0;
    // The longest FPDU (RFC 5044 §4.1: a 16-bit ULPDU_Length, with padding, CRC and its Markers).
    // A frame straddling the segment's left edge starts at most one longest FPDU before it; the
    // Marker that locates a frame at or before that one lies within a further longest FPDU plus
    // one Marker interval (every Marker inside that span points at an FPDU starting in it).
    const std::size_t longest = mpa::fpdu_wire_length(mpa::kMaxUlpduLength, true, 0) + mpa::kMarkerSize;
    return 2 * longest + mpa::kMarkerInterval;
}

}  // namespace rnic
