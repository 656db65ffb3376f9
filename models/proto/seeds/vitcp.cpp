// VI/TCP segments (draft-dicecco-vitcp-01 §3): codec, connection negotiation and deframer.
#include "proto/seeds/vitcp.h"

#include <algorithm>
#include <cstring>

#include "proto/bytes.h"
#include "proto/crc32c.h"

namespace rnic::proto::vitcp {
namespace {

void set(std::string* error, error_code* code, error_code kind, std::string message) {
    if (error != nullptr) *error = std::move(message);
    if (code != nullptr) *code = kind;
}

std::string hex32(std::uint32_t v) {
    static const char d[] = "0123456789abcdef";
    std::string s = "0x";
    for (int shift = 28; shift >= 0; shift -= 4) s += d[(v >> shift) & 0xFu];
    return s;
}

// Type/Flags byte (§3.2): Eom (7) | IdV (6) | TrE (5) | Type (4-0).
constexpr std::uint8_t kEomBit = 0x80;
constexpr std::uint8_t kIdvBit = 0x40;
constexpr std::uint8_t kTreBit = 0x20;
constexpr std::uint8_t kTypeMask = 0x1F;

// CE header offsets, relative to its start (§3.3 figure).
constexpr std::size_t kCeAttributes = 0;
constexpr std::size_t kCeCallingLength = 2;
constexpr std::size_t kCeMtu = 4;
constexpr std::size_t kCeCalling = 8;
constexpr std::size_t kCeReadWindow = kCeCalling + kDiscriminatorSize;  // 72
constexpr std::size_t kCeCalledLength = kCeReadWindow + 2;              // 74
constexpr std::size_t kCeCalled = kCeReadWindow + 4;                    // 76

void write_ce(const ce_header& ce, std::uint8_t* out) {
    std::memset(out, 0, kCeFixedSize);
    put_be16(out + kCeAttributes, ce.attributes.pack());
    put_be16(out + kCeCallingLength, static_cast<std::uint16_t>(ce.calling_discriminator.size()));
    put_be32(out + kCeMtu, ce.mtu);
    if (!ce.calling_discriminator.empty())
        std::memcpy(out + kCeCalling, ce.calling_discriminator.data(), ce.calling_discriminator.size());
    put_be16(out + kCeReadWindow, ce.rdma_read_window);
    put_be16(out + kCeCalledLength, static_cast<std::uint16_t>(ce.called_discriminator.size()));
    if (!ce.called_discriminator.empty())
        std::memcpy(out + kCeCalled, ce.called_discriminator.data(), ce.called_discriminator.size());
    std::uint8_t* p = out + kCeFixedSize;
    for (const option& o : ce.options) {
        put_be16(p, o.type);
        put_be16(p + 2, static_cast<std::uint16_t>(kOptionHeaderSize + o.data.size()));
        if (!o.data.empty()) std::memcpy(p + kOptionHeaderSize, o.data.data(), o.data.size());
        p += kOptionHeaderSize + o.data.size();
    }
    if (ce.end_of_options) put_be16(p, kOptionEnd);
}

}  // namespace

const char* to_string(segment_type t) {
    switch (t) {
    case segment_type::send:
        return "Send";
    case segment_type::rdma_write:
        return "RdmaWrite";
    case segment_type::read_request:
        return "RdmaReadRequest";
    case segment_type::read_response:
        return "RdmaReadResponse";
    case segment_type::nop:
        return "NOP";
    case segment_type::connect_request:
        return "ConnectRequest";
    case segment_type::connect_accept:
        return "ConnectAccept";
    case segment_type::connect_reject:
        return "ConnectReject";
    case segment_type::connect_no_match:
        return "ConnectNoMatch";
    }
    return "unknown";
}

const char* to_string(error_code e) {
    switch (e) {
    case error_code::none:
        return "none";
    case error_code::truncated:
        return "truncated";
    case error_code::bad_version:
        return "bad_version";
    case error_code::bad_type:
        return "bad_type";
    case error_code::length_too_short:
        return "length_too_short";
    case error_code::length_mismatch:
        return "length_mismatch";
    case error_code::unexpected_payload:
        return "unexpected_payload";
    case error_code::bad_option:
        return "bad_option";
    case error_code::missing_end_of_options:
        return "missing_end_of_options";
    case error_code::bad_discriminator_length:
        return "bad_discriminator_length";
    case error_code::bad_attributes:
        return "bad_attributes";
    case error_code::reserved_bits:
        return "reserved_bits";
    case error_code::bad_data_offset:
        return "bad_data_offset";
    case error_code::crc_mismatch:
        return "crc_mismatch";
    }
    return "unknown";
}

std::size_t max_payload(std::size_t emss, segment_type t, bool crc) {
    if (!has_payload(t)) return 0;
    const std::size_t limit = std::min(emss, kMaxSegmentLength);
    const std::size_t fixed = overhead(t, crc);
    return limit > fixed ? limit - fixed : 0;
}

std::uint16_t remote_error_code::pack() const {
    return static_cast<std::uint16_t>((is_error_code << 8) | ((reserved & 0x1Fu) << 3) | (transport_error ? 0x4u : 0u) |
                                      (descriptor_error ? 0x2u : 0u) | (memory_protection_error ? 0x1u : 0u));
}

remote_error_code remote_error_code::unpack(std::uint16_t v) {
    remote_error_code r;
    r.is_error_code = static_cast<std::uint8_t>(v >> 8);
    r.reserved = static_cast<std::uint8_t>((v >> 3) & 0x1Fu);
    r.transport_error = (v & 0x4u) != 0;
    r.descriptor_error = (v & 0x2u) != 0;
    r.memory_protection_error = (v & 0x1u) != 0;
    return r;
}

std::uint16_t attributes::pack() const {
    return static_cast<std::uint16_t>(((reserved & 0x1FFu) << 7) | (peer_to_peer ? 0x40u : 0u) |
                                      (descriptor_flow_control ? 0x20u : 0u) | (rdma_read_enable ? 0x10u : 0u) |
                                      (rdma_write_enable ? 0x08u : 0u) | (reliable_reception ? 0x04u : 0u) |
                                      (reliable_delivery ? 0x02u : 0u) | (unreliable ? 0x01u : 0u));
}

attributes attributes::unpack(std::uint16_t v) {
    attributes a;
    a.unreliable = (v & 0x01u) != 0;
    a.reliable_delivery = (v & 0x02u) != 0;
    a.reliable_reception = (v & 0x04u) != 0;
    a.rdma_write_enable = (v & 0x08u) != 0;
    a.rdma_read_enable = (v & 0x10u) != 0;
    a.descriptor_flow_control = (v & 0x20u) != 0;
    a.peer_to_peer = (v & 0x40u) != 0;
    a.reserved = static_cast<std::uint16_t>(v >> 7);
    return a;
}

bool ce_header::has_option(std::uint16_t type) const {
    return std::any_of(options.begin(), options.end(), [&](const option& o) { return o.type == type; });
}

std::size_t ce_header::size() const {
    std::size_t n = kCeFixedSize + (end_of_options ? kOptionEndSize : 0);
    for (const option& o : options) n += kOptionHeaderSize + o.data.size();
    return n;
}

void encode_header(const header& h, std::uint8_t* out) {
    out[0] = h.version;
    out[1] =
        static_cast<std::uint8_t>((h.eom ? kEomBit : 0) | (h.immediate_valid ? kIdvBit : 0) |
                                  (h.transmit_error ? kTreBit : 0) | (static_cast<std::uint8_t>(h.type) & kTypeMask));
    put_be16(out + 2, h.segment_length);
    put_be32(out + 4, h.data_offset);
    put_be32(out + 8, h.immediate_data);
    put_be32(out + 12, h.message_number);
    put_be32(out + 16, h.message_ack);
    put_be16(out + 20, h.rx_descriptors_posted);
    put_be16(out + 22, h.remote_error.pack());
}

std::optional<header> decode_header(const std::uint8_t* data, std::size_t len, std::string* error) {
    if (len < kSegmentHeaderSize) {
        if (error != nullptr) *error = "VI segment header truncated: " + std::to_string(len) + " bytes, needs 24";
        return std::nullopt;
    }
    header h;
    h.version = data[0];
    h.eom = (data[1] & kEomBit) != 0;
    h.immediate_valid = (data[1] & kIdvBit) != 0;
    h.transmit_error = (data[1] & kTreBit) != 0;
    h.type = static_cast<segment_type>(data[1] & kTypeMask);
    h.segment_length = get_be16(data + 2);
    h.data_offset = get_be32(data + 4);
    h.immediate_data = get_be32(data + 8);
    h.message_number = get_be32(data + 12);
    h.message_ack = get_be32(data + 16);
    h.rx_descriptors_posted = get_be16(data + 20);
    h.remote_error = remote_error_code::unpack(get_be16(data + 22));
    return h;
}

bool encode(const segment& s, std::vector<std::uint8_t>& out, std::string* error) {
    auto refuse = [&](const std::string& why) {
        if (error != nullptr) *error = why;
        return false;
    };
    const segment_type t = s.header.type;
    if (static_cast<std::uint8_t>(t) > kMaxSegmentType) return refuse("segment type above 8");
    if (s.rdma.has_value() != has_rdma_header(t))
        return refuse(std::string("RDMA header ") + (s.rdma ? "present" : "missing") + " in a " + to_string(t));
    if (s.ce.has_value() != has_ce_header(t))
        return refuse(std::string("CE header ") + (s.ce ? "present" : "missing") + " in a " + to_string(t));
    if (!s.payload.empty() && !has_payload(t)) return refuse(std::string(to_string(t)) + " carries no payload (§3.1)");
    if (s.ce) {
        if (s.ce->calling_discriminator.size() > kDiscriminatorSize ||
            s.ce->called_discriminator.size() > kDiscriminatorSize)
            return refuse("discriminator longer than 64 bytes (§3.3)");
        for (const option& o : s.ce->options) {
            if (o.type == kOptionEnd) return refuse("option type 0 is the End of Option List: use end_of_options");
            if (kOptionHeaderSize + o.data.size() > 0xFFFF) return refuse("option longer than 65535 bytes");
        }
        const bool crc_option = s.ce->has_option(kOptionCrc);
        if (crc_option != s.crc)
            return refuse("a ConnectRequest/ConnectAccept has a CRC iff it has the CRC option (§3.6)");
        if (crc_option && !s.ce->end_of_options)
            return refuse("with the CRC option the End of Option List must be explicit (§3.3)");
    }
    const std::size_t length =
        fixed_headers_size(t) + (s.ce ? s.ce->size() : 0) + s.payload.size() + (s.crc ? kTrailerSize : 0);
    if (length > kMaxSegmentLength) return refuse("Segment Length " + std::to_string(length) + " exceeds 65535");

    header h = s.header;
    h.segment_length = static_cast<std::uint16_t>(length);
    const std::size_t base = out.size();
    out.resize(base + length);
    std::uint8_t* p = out.data() + base;
    encode_header(h, p);
    std::size_t pos = kSegmentHeaderSize;
    if (s.rdma) {
        put_be64(p + pos, s.rdma->address);
        put_be32(p + pos + 8, s.rdma->memory_handle);
        put_be32(p + pos + 12, s.rdma->length);
        pos += kRdmaHeaderSize;
    }
    if (s.ce) {
        write_ce(*s.ce, p + pos);
        pos += s.ce->size();
    }
    if (!s.payload.empty()) std::memcpy(p + pos, s.payload.data(), s.payload.size());
    pos += s.payload.size();
    // §3.6: the CRC of the whole segment with zero in the CRC field, no extra x^32 factor
    // = crc_db710641 of everything before the trailer (see proto/crc32c.h).
    if (s.crc) put_le32(p + pos, crc_db710641(p, pos));
    return true;
}

std::vector<std::uint8_t> encode(const segment& s) {
    std::vector<std::uint8_t> out;
    encode(s, out);
    return out;
}

std::optional<segment_view> parse(const std::uint8_t* data, std::size_t len, bool crc_negotiated, std::string* error,
                                  error_code* code, const decode_options& options) {
    std::string message;
    auto h = decode_header(data, len, &message);
    if (!h) {
        set(error, code, error_code::truncated, message);
        return std::nullopt;
    }
    auto fail = [&](error_code e, std::string text) -> std::optional<segment_view> {
        set(error, code, e, std::move(text));
        return std::nullopt;
    };
    if (h->version != kVersion)
        return fail(error_code::bad_version, "Version " + std::to_string(h->version) + ", expected 1 (§3.2)");
    const auto raw_type = static_cast<std::uint8_t>(h->type);
    if (raw_type > kMaxSegmentType)
        return fail(error_code::bad_type, "Type " + std::to_string(raw_type) + " undefined (§3.2)");
    const segment_type t = h->type;
    const std::size_t seglen = h->segment_length;
    if (seglen < kSegmentHeaderSize)
        return fail(error_code::length_too_short,
                    "Segment Length " + std::to_string(seglen) + " below the 24-byte header");
    if (len < seglen)
        return fail(error_code::truncated, "VI segment truncated: " + std::to_string(len) + " bytes, Segment Length " +
                                               std::to_string(seglen));

    segment_view v;
    v.header = *h;
    v.wire_length = seglen;
    std::size_t pos = kSegmentHeaderSize;
    std::size_t body_end = seglen;  // end of headers + payload (before the trailer)

    if (has_ce_header(t)) {
        if (seglen < kSegmentHeaderSize + kCeFixedSize)
            return fail(error_code::length_too_short, "Segment Length " + std::to_string(seglen) + " below the " +
                                                          std::to_string(kSegmentHeaderSize + kCeFixedSize) +
                                                          " bytes of segment and CE headers");
        const std::uint8_t* ce = data + pos;
        ce_header c;
        c.attributes = attributes::unpack(get_be16(ce + kCeAttributes));
        const std::size_t calling_len = get_be16(ce + kCeCallingLength);
        c.mtu = get_be32(ce + kCeMtu);
        c.rdma_read_window = get_be16(ce + kCeReadWindow);
        const std::size_t called_len = get_be16(ce + kCeCalledLength);
        c.calling_discriminator.assign(ce + kCeCalling, ce + kCeCalling + std::min(calling_len, kDiscriminatorSize));
        c.called_discriminator.assign(ce + kCeCalled, ce + kCeCalled + std::min(called_len, kDiscriminatorSize));
        // Options run to the End of Option List or the end of the segment (§3.3).
        std::size_t o = pos + kCeFixedSize;
        c.end_of_options = false;
        bool crc_option = false;
        while (o < seglen) {
            const std::size_t left = seglen - o;
            if (left < kOptionEndSize)
                return fail(error_code::bad_option, "1 byte left for an option Type at offset " + std::to_string(o));
            const std::uint16_t type = get_be16(data + o);
            if (type == kOptionEnd) {
                c.end_of_options = true;
                o += kOptionEndSize;
                break;
            }
            // With a CRC option and no End of Option List, the trailer gets read as an option.
            const bool reading_trailer = crc_option && o + kTrailerSize == seglen;
            std::size_t olen = left >= kOptionHeaderSize ? get_be16(data + o + 2) : 0;
            if (left < kOptionHeaderSize || olen < kOptionHeaderSize || olen > left) {
                if (reading_trailer)
                    return fail(error_code::missing_end_of_options,
                                "CRC option without End of Option List: the CRC is read as an option (§3.3)");
                return fail(error_code::bad_option, "option Type " + std::to_string(type) + " at offset " +
                                                        std::to_string(o) + " has Length " + std::to_string(olen) +
                                                        " with " + std::to_string(left) + " bytes left");
            }
            if ((type == kOptionCrc || type == kOptionUrgentMarker) && olen != kOptionHeaderSize)
                return fail(error_code::bad_option,
                            "option Type " + std::to_string(type) + " must have Length 4, has " + std::to_string(olen));
            option opt;
            opt.type = type;
            opt.data.assign(data + o + kOptionHeaderSize, data + o + olen);
            c.options.push_back(std::move(opt));
            if (type == kOptionCrc) crc_option = true;
            o += olen;
        }
        if (crc_option && !c.end_of_options)
            return fail(error_code::missing_end_of_options,
                        "CRC option without End of Option List: the CRC is read as an option (§3.3)");
        v.crc_present = crc_option;  // §3.5, §3.6
        body_end = seglen - (v.crc_present ? kTrailerSize : 0);
        if (o > body_end) return fail(error_code::length_mismatch, "the options run into the trailer");
        if (o < body_end)
            return fail(error_code::length_mismatch, std::to_string(body_end - o) +
                                                         " bytes after the End of Option List before the " +
                                                         (v.crc_present ? "trailer" : "segment end"));
        pos = o;
        v.ce = std::move(c);
    } else if (t == segment_type::connect_reject || t == segment_type::connect_no_match) {
        // §3.6: no payload, so the Segment Length tells whether a CRC is included.
        if (seglen != kSegmentHeaderSize && seglen != kSegmentHeaderSize + kTrailerSize)
            return fail(error_code::length_mismatch, std::string(to_string(t)) + " with Segment Length " +
                                                         std::to_string(seglen) + " (24, or 28 with CRC)");
        v.crc_present = seglen == kSegmentHeaderSize + kTrailerSize;
        body_end = kSegmentHeaderSize;
    } else {
        v.crc_present = crc_negotiated;
        const std::size_t need = fixed_headers_size(t) + (v.crc_present ? kTrailerSize : 0);
        if (seglen < need)
            return fail(error_code::length_too_short,
                        std::string(to_string(t)) + " with Segment Length " + std::to_string(seglen) + ", headers" +
                            (v.crc_present ? " and trailer" : "") + " need " + std::to_string(need));
        body_end = seglen - (v.crc_present ? kTrailerSize : 0);
        if (has_rdma_header(t)) {
            rdma_header r;
            r.address = get_be64(data + pos);
            r.memory_handle = get_be32(data + pos + 8);
            r.length = get_be32(data + pos + 12);
            v.rdma = r;
            pos += kRdmaHeaderSize;
        }
        if (!has_payload(t) && body_end != pos)
            return fail(error_code::unexpected_payload, std::string(to_string(t)) + " with " +
                                                            std::to_string(body_end - pos) + " payload bytes (§3.1)");
    }
    v.payload = data + pos;
    v.payload_len = body_end - pos;

    if (v.crc_present) {
        v.crc = get_le32(data + body_end);
        if (options.check_crc) {
            const std::uint32_t computed = crc_db710641(data, body_end);
            if (computed != v.crc)
                return fail(error_code::crc_mismatch,
                            "trailer CRC received " + hex32(v.crc) + ", computed " + hex32(computed));
        }
    }

    if (!options.ignore_reserved_bits && h->remote_error.reserved != 0)
        return fail(error_code::reserved_bits, "Remote Error Code reserved bits 7-3 set");
    if (v.ce) {
        const std::size_t calling_len = get_be16(data + kSegmentHeaderSize + kCeCallingLength);
        const std::size_t called_len = get_be16(data + kSegmentHeaderSize + kCeCalledLength);
        if (calling_len > kDiscriminatorSize || called_len > kDiscriminatorSize)
            return fail(error_code::bad_discriminator_length, "discriminator lengths " + std::to_string(calling_len) +
                                                                  "/" + std::to_string(called_len) +
                                                                  ", at most 64 (§3.3)");
        if (!options.ignore_reserved_bits && v.ce->attributes.reserved != 0)
            return fail(error_code::reserved_bits, "Calling Attributes reserved bits 15-7 set");
        if (v.ce->attributes.reliability_bits() != 1)
            return fail(error_code::bad_attributes,
                        "Calling Attributes must name exactly one reliability level (§3.3)");
    }
    if (is_single_segment_message(t) && h->data_offset != 0)
        return fail(
            error_code::bad_data_offset,
            std::string(to_string(t)) + " is a single-segment message, Data Offset " + std::to_string(h->data_offset));
    if (code != nullptr) *code = error_code::none;
    return v;
}

std::optional<segment> decode(const std::uint8_t* data, std::size_t len, bool crc_negotiated, std::string* error,
                              error_code* code, const decode_options& options) {
    auto v = parse(data, len, crc_negotiated, error, code, options);
    if (!v) return std::nullopt;
    segment s;
    s.header = v->header;
    s.rdma = v->rdma;
    s.ce = std::move(v->ce);
    s.payload.assign(v->payload, v->payload + v->payload_len);
    s.crc = v->crc_present;
    return s;
}

// ---------------------------------------------------------------------------------------------
// Connection establishment

ce_header make_request(const local_parameters& local, std::vector<std::uint8_t> calling_discriminator,
                       std::vector<std::uint8_t> called_discriminator) {
    ce_header c;
    c.attributes = local.attributes;
    c.mtu = local.mtu;  // "proposed" (§3.3)
    c.rdma_read_window = local.rdma_read_window;
    c.calling_discriminator = std::move(calling_discriminator);
    c.called_discriminator = std::move(called_discriminator);
    if (local.crc) c.options.push_back({kOptionCrc, {}});
    if (local.urgent_marker) c.options.push_back({kOptionUrgentMarker, {}});
    c.end_of_options = true;
    return c;
}

ce_header make_accept(const ce_header& request, const local_parameters& local) {
    ce_header c;
    c.attributes = local.attributes;
    c.mtu = std::min(request.mtu, local.mtu);  // "agreed": the lesser (§3.3)
    c.rdma_read_window = std::min(request.rdma_read_window, local.rdma_read_window);
    c.calling_discriminator = request.calling_discriminator;
    c.called_discriminator = request.called_discriminator;
    // §3.6: "A ConnectAccept MAY contain the CRC option only if the associated ConnectRequest
    // contained the CRC option".
    if (local.crc && request.has_option(kOptionCrc)) c.options.push_back({kOptionCrc, {}});
    if (local.urgent_marker) c.options.push_back({kOptionUrgentMarker, {}});
    c.end_of_options = true;
    return c;
}

std::optional<agreement> negotiate(const ce_header& request, const ce_header& accept, std::string* error) {
    auto refuse = [&](const std::string& why) -> std::optional<agreement> {
        if (error != nullptr) *error = why;
        return std::nullopt;
    };
    const attributes& a = request.attributes;
    const attributes& b = accept.attributes;
    if (a.unreliable != b.unreliable || a.reliable_delivery != b.reliable_delivery ||
        a.reliable_reception != b.reliable_reception)
        return refuse("reliability levels differ (§3.3)");
    if (a.peer_to_peer != b.peer_to_peer) return refuse("peer-to-peer bits differ (§3.3)");
    if (accept.mtu > request.mtu)
        return refuse("ConnectAccept MTU " + std::to_string(accept.mtu) + " above the proposed " +
                      std::to_string(request.mtu));
    if (accept.rdma_read_window > request.rdma_read_window)
        return refuse("ConnectAccept RDMA Read Window " + std::to_string(accept.rdma_read_window) +
                      " above the proposed " + std::to_string(request.rdma_read_window));
    const bool req_crc = request.has_option(kOptionCrc);
    const bool acc_crc = accept.has_option(kOptionCrc);
    if (acc_crc && !req_crc) return refuse("ConnectAccept has the CRC option, the ConnectRequest did not (§3.6)");
    agreement g;
    g.mtu = accept.mtu;
    g.rdma_read_window = accept.rdma_read_window;
    g.crc = req_crc && acc_crc;
    g.request_urgent_marker = request.has_option(kOptionUrgentMarker);
    g.accept_urgent_marker = accept.has_option(kOptionUrgentMarker);
    return g;
}

// ---------------------------------------------------------------------------------------------
// Deframer

deframer::deframer(const config& cfg, sink_fn sink) : cfg_(cfg), sink_(std::move(sink)) {}

bool deframer::precheck(const std::uint8_t* first4) {
    if (first4[0] != kVersion) {
        fail(error_code::bad_version, "Version " + std::to_string(first4[0]) + ", expected 1");
        return false;
    }
    const std::uint8_t type = first4[1] & kTypeMask;
    if (type > kMaxSegmentType) {
        fail(error_code::bad_type, "Type " + std::to_string(type) + " undefined");
        return false;
    }
    const std::size_t seglen = get_be16(first4 + 2);
    if (seglen < kSegmentHeaderSize) {
        fail(error_code::length_too_short, "Segment Length " + std::to_string(seglen) + " below the 24-byte header");
        return false;
    }
    return true;
}

void deframer::deliver(const std::uint8_t* data, std::size_t len) {
    std::string message;
    error_code code = error_code::none;
    auto v = parse(data, len, cfg_.crc_negotiated, &message, &code, cfg_.decode);
    if (!v && code == error_code::crc_mismatch && cfg_.continue_after_crc_error) {
        decode_options unchecked = cfg_.decode;
        unchecked.check_crc = false;
        v = parse(data, len, cfg_.crc_negotiated, &message, &code, unchecked);
        if (v) v->crc_ok = false;
    }
    if (!v) {
        fail(code, message);
        return;
    }
    ++segments_;
    segment_start_ += len;
    if (sink_) sink_(*v);
}

error_code deframer::feed(const std::uint8_t* data, std::size_t len) {
    while (len != 0 && error_ == error_code::none) {
        std::size_t n = 0;
        if (buffer_.empty() && len >= 4) {
            if (!precheck(data)) break;
            const std::size_t seglen = get_be16(data + 2);
            if (len >= seglen) {
                deliver(data, seglen);
                if (error_ != error_code::none) break;
                n = seglen;
            }
        }
        if (n == 0) {
            if (buffer_.size() < 4) {
                n = std::min<std::size_t>(4 - buffer_.size(), len);
                buffer_.insert(buffer_.end(), data, data + n);
                if (buffer_.size() == 4) precheck(buffer_.data());  // on failure the loop ends after counting n
            } else {
                const std::size_t seglen = get_be16(buffer_.data() + 2);
                n = std::min(seglen - buffer_.size(), len);
                buffer_.insert(buffer_.end(), data, data + n);
                if (buffer_.size() == seglen) {
                    deliver(buffer_.data(), seglen);
                    buffer_.clear();
                }
            }
        }
        data += n;
        len -= n;
        bytes_consumed_ += n;
    }
    return error_;
}

void deframer::fail(error_code err, const std::string& detail) {
    error_ = err;
    error_detail_ = std::string(to_string(err)) + " in the VI segment starting at stream byte " +
                    std::to_string(segment_start_) + ": " + detail;
}

}  // namespace rnic::proto::vitcp
