// Typed error of the wire parsers of the protocol library (mpa::decode, ddp::decode_*,
// net::parse_tcp_frame, read_pcap). Each of them takes an optional trailing `ParseError* code`
// that is set to ParseError::none on success and to the kind of the failure otherwise; the
// human-readable message (naming field and offset) is still given through `std::string* error`.
// (mpa::Deframer reports through its own DeframeError; the seed protocols have their own Error.)
#pragma once

namespace rnic::proto {

enum class parse_error {
    none,           // success
    short_input,    // fewer bytes than the header, or than a length field announces, are present
    bad_magic,      // a fixed key / magic number does not match (MPA Key, pcap magic)
    bad_version,    // a version / revision field holds a value the format does not define
    reserved_bits,  // a reserved bit (or a bit reserved in this frame type) is set
    bad_length,     // a length field holds a value outside its legal range
    inconsistent,   // fields contradict each other (a length beyond its container, a flag needing another version)
    bad_checksum,   // a checksum does not verify
    unsupported,    // valid input of a kind this parser does not handle (pcapng, IPv4 fragment, non-TCP)
    io              // the input could not be read (file open / read error)
};

inline const char* to_string(parse_error e) {
    switch (e) {
    case parse_error::none:
        return "none";
    case parse_error::short_input:
        return "short input";
    case parse_error::bad_magic:
        return "bad magic";
    case parse_error::bad_version:
        return "bad version";
    case parse_error::reserved_bits:
        return "reserved bits set";
    case parse_error::bad_length:
        return "bad length";
    case parse_error::inconsistent:
        return "inconsistent fields";
    case parse_error::bad_checksum:
        return "bad checksum";
    case parse_error::unsupported:
        return "unsupported";
    case parse_error::io:
        return "I/O error";
    }
    return "unknown parse error";
}

// Stores `kind` in *code when code is not null (helper for the parsers).
inline void set_code(parse_error* code, parse_error kind) {
    if (code != nullptr) *code = kind;
}

}  // namespace rnic::proto
