#include "framing/ift_framing.h"

#include <algorithm>
#include <utility>

#include "framing/mpa_framing.h"
#include "proto/ddp_rdmap.h"
#include "proto/seeds/ift.h"

namespace rnic {

namespace ift = proto::ift;

namespace {

// The DDP headers are the only headers IFT carries (seed 001 §3.1): tagged or untagged.
ift::decode_options ddp_limits() {
    ift::decode_options limits;
    limits.min_header_size = proto::ddp::kTaggedHeaderSize;
    limits.max_header_size = proto::ddp::kUntaggedHeaderSize;
    return limits;
}

// Seed 001 §3.1: the DDP header goes under the Header CRC, the rest of the ULPDU is the payload.
void encode_ulpdu(const std::uint8_t* ulpdu, std::size_t len, std::vector<std::uint8_t>& out) {
    const std::size_t header = len == 0 ? 0 : std::min(len, proto::ddp::header_size_from_control(ulpdu[0]));
    ift::encode(ulpdu, header, ulpdu + header, len - header, out);
}

class ift_deframer final : public frame_deframer {
public:
    ift_deframer(std::uint32_t width, frame_sink sink) : deframer_(config(), handlers(width, std::move(sink))) {}
    deframe_status feed(const std::uint8_t* data, std::size_t len) override {
        const ift::error_code e = deframer_.feed(data, len);
        if (e == ift::error_code::none) return deframe_status::ok;
        const bool crc = e == ift::error_code::header_crc_mismatch || e == ift::error_code::payload_crc_mismatch;
        return crc ? deframe_status::crc_error : deframe_status::framing_error;
    }
    std::string error_name() const override { return std::string("IFT ") + ift::to_string(deframer_.error()); }
    const std::string& error_detail() const override { return deframer_.error_detail(); }

private:
    static ift::deframer::config config() {
        ift::deframer::config cfg;
        cfg.limits = ddp_limits();
        cfg.limits.max_payload_size = ift::kMaxPayloadSize;
        return cfg;
    }
    static ift::deframer::handler_set handlers(std::uint32_t width, frame_sink sink) {
        ift::deframer::handler_set h;
        h.frame = [width, sink = std::move(sink)](const ift::frame_view& f, bool) {
            std::vector<std::uint8_t> ulpdu(f.header, f.header + f.header_size);
            ulpdu.insert(ulpdu.end(), f.payload, f.payload + f.payload_size);
            const std::uint64_t beats = (f.wire_length + width - 1) / width;
            sink(ulpdu.data(), ulpdu.size(), {beats, beats});
        };
        return h;
    }
    ift::deframer deframer_;
};

}  // namespace

mpa_settings ift_framing::settle(const mpa_settings& negotiated) const {
    // No markers, CRCs always (seed 001 §3.1, §5.3). An IFT frame has 12 bytes of overhead where the
    // MPA limit the firmware computed (RFC 5044 §6: EMSS - 6 - EMSS mod 4) allowed at most 9.
    mpa_settings s = negotiated;
    s.tx_markers = s.rx_markers = false;
    s.crc = true;
    s.max_ulpdu = negotiated.max_ulpdu > 6 ? negotiated.max_ulpdu - 6 : 0;
    return s;
}

std::size_t ift_framing::tx_room(std::size_t ulpdu_len) const {
    // IFT adds ift::kOverhead (12) bytes whatever the length; the RDMA engine has always waited for
    // MPA's bound with Markers, which is larger. Kept so that no IFT figure moves with the
    // interface; the exact 12 is a behaviour change of its own.
    return mpa_framing::marker_bound(ulpdu_len);
}

std::size_t ift_framing::wire_length(std::size_t ulpdu_len, const frame_options&, std::uint32_t) const {
    return ift::kOverhead + ulpdu_len;  // no padding, no markers
}

datapath_cycles ift_framing::build(const std::uint8_t* ulpdu, std::size_t len, const frame_options&, std::uint32_t,
                                   std::vector<std::uint8_t>& out) {
    const std::size_t before = out.size();
    encode_ulpdu(ulpdu, len, out);
    const std::uint64_t b = beats(out.size() - before);
    return {b, b};
}

void ift_framing::reframe(const std::uint8_t* ulpdu, std::size_t len, const frame_options&, std::uint32_t,
                          std::vector<std::uint8_t>& out) const {
    encode_ulpdu(ulpdu, len, out);
}

std::unique_ptr<frame_deframer> ift_framing::make_deframer(const frame_options&, frame_sink sink) {
    return std::make_unique<ift_deframer>(width_, std::move(sink));
}

bool ift_framing::deframe_whole(const frame_options&, std::uint32_t, const std::uint8_t* data, std::size_t len,
                                const frame_sink& sink) {
    // Whole frames from the start of `data` (the Header and Payload CRCs vouch for each, seed 001
    // §5.1); a trailing partial frame is left alone.
    std::vector<std::uint8_t> ulpdu;
    std::size_t at = 0;
    while (at < len) {
        const std::size_t need = ift::frame_length_at(data + at, len - at);
        if (need == 0 || need > len - at) break;
        std::string error;
        const auto f = ift::parse(data + at, need, &error, nullptr, ddp_limits());
        if (!f) return false;
        ulpdu.assign(f->header, f->header + f->header_size);
        ulpdu.insert(ulpdu.end(), f->payload, f->payload + f->payload_size);
        const std::uint64_t b = beats(ift::kOverhead + ulpdu.size());
        sink(ulpdu.data(), ulpdu.size(), {b, b});
        at += need;
    }
    return true;
}

}  // namespace rnic
