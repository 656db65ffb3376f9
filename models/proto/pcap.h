// Classic libpcap capture files (the format of pcap-savefile(5)): writing Ethernet frames with
// nanosecond timestamps, and reading them back (tests, trace tools). Frames are stored without
// the FCS, as the link model carries them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "proto/parse_error.h"

namespace rnic::proto {

constexpr std::uint32_t kPcapMagicMicroseconds = 0xA1B2C3D4u;
constexpr std::uint32_t kPcapMagicNanoseconds = 0xA1B23C4Du;
constexpr std::uint32_t kPcapLinktypeEthernet = 1;
constexpr std::uint32_t kPcapSnaplen = 262144;

// Writes a classic pcap file: nanosecond magic 0xa1b23c4d, version 2.4, LINKTYPE_ETHERNET,
// snaplen 262144, all fields little-endian. Frames longer than the snaplen are cut to it
// (the record keeps the original length). Not copyable; movable.
class pcap_writer {
public:
    pcap_writer() = default;
    pcap_writer(const pcap_writer&) = delete;
    pcap_writer& operator=(const pcap_writer&) = delete;
    pcap_writer(pcap_writer&& other) noexcept;
    pcap_writer& operator=(pcap_writer&& other) noexcept;
    ~pcap_writer();

    // Creates (truncates) `path` and writes the file header; on failure *error (may be null)
    // names the path and the errno text. Closes a file that was already open.
    bool open(const std::string& path, std::string* error);
    // Appends one record; does nothing when not open. A failed write is remembered (good()).
    void write(std::uint64_t time_ns, const std::uint8_t* frame, std::size_t len);
    // For simulators with several capture points (`source`s, numbered by add_source() in a fixed
    // order) writing into one file: frames of the same picosecond are written ordered by source,
    // then in call order, so that the file does not depend on the order in which a simulation
    // kernel runs processes that are due at the same time. Held until a later time, flush or close.
    unsigned add_source() { return sources_++; }
    void write_at(std::uint64_t time_ps, unsigned source, const std::uint8_t* frame, std::size_t len);
    void flush_pending();
    void close();
    bool is_open() const { return file_ != nullptr; }
    // False once a write to the current file has failed (e.g. disk full).
    bool good() const { return good_; }
    std::uint64_t records() const { return records_; }

private:
    std::FILE* file_ = nullptr;
    bool good_ = true;
    std::uint64_t records_ = 0;
    unsigned sources_ = 0;
    struct pending_frame {
        unsigned source;
        std::vector<std::uint8_t> bytes;
    };
    std::uint64_t pending_ps_ = 0;
    std::vector<pending_frame> pending_;            // frames of time pending_ps_, in call order
    std::vector<std::vector<std::uint8_t>> spare_;  // buffers of flushed frames, reused
};

struct pcap_record {
    std::uint64_t time_ns = 0;
    std::vector<std::uint8_t> data;     // the captured bytes (incl_len)
    std::uint32_t original_length = 0;  // orig_len: the frame's length on the wire
};

// Reads a classic pcap (micro- or nanosecond magic, either byte order); nullopt + *error on bad
// input (unreadable file, pcapng, wrong magic, truncated header or record). *code (may be null)
// is none on success, otherwise io (cannot open / read), short_input (truncated file header,
// record header or record data), unsupported (pcapng), bad_magic (not a pcap magic) or
// bad_length (implausible captured length).
std::optional<std::vector<pcap_record>> read_pcap(const std::string& path, std::string* error,
                                                  parse_error* code = nullptr);

}  // namespace rnic::proto
