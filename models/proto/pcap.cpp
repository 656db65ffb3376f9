// Classic pcap reader/writer. The writer buffers through stdio; the reader loads the whole
// file, which is fine for the test- and tool-sized captures it is used on.
#include "proto/pcap.h"

#include <algorithm>

#include <cerrno>
#include <cstring>
#include <utility>

#include "proto/bytes.h"

namespace rnic::proto {
namespace {

constexpr std::size_t kFileHeaderSize = 24;
constexpr std::size_t kRecordHeaderSize = 16;
constexpr std::uint32_t kPcapngMagic = 0x0A0D0D0Au;
constexpr std::size_t kWriteBuffer = 1 << 20;
// A record longer than this is taken as corruption rather than allocated.
constexpr std::uint32_t kMaxRecordLength = 64u << 20;

std::string errno_text(int err) {
    return std::strerror(err);
}

void set_error(std::string* error, std::string text) {
    if (error != nullptr) *error = std::move(text);
}

std::uint32_t swap32(std::uint32_t v) {
    return (v >> 24) | ((v >> 8) & 0xFF00u) | ((v << 8) & 0xFF0000u) | (v << 24);
}

struct format {
    bool big_endian = false;
    bool nanoseconds = false;
};

std::optional<format> detect_format(std::uint32_t magic_le) {
    if (magic_le == kPcapMagicMicroseconds) return format{false, false};
    if (magic_le == kPcapMagicNanoseconds) return format{false, true};
    if (swap32(magic_le) == kPcapMagicMicroseconds) return format{true, false};
    if (swap32(magic_le) == kPcapMagicNanoseconds) return format{true, true};
    return std::nullopt;
}

std::optional<std::vector<std::uint8_t>> load_file(const std::string& path, std::string* error, parse_error* code) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) {
        set_code(code, parse_error::io);
        set_error(error, path + ": cannot open: " + errno_text(errno));
        return std::nullopt;
    }
    std::vector<std::uint8_t> bytes;
    std::uint8_t chunk[65536];
    std::size_t n = 0;
    while ((n = std::fread(chunk, 1, sizeof chunk, f)) != 0) bytes.insert(bytes.end(), chunk, chunk + n);
    const bool failed = std::ferror(f) != 0;
    const int err = errno;
    std::fclose(f);
    if (failed) {
        set_code(code, parse_error::io);
        set_error(error, path + ": read error: " + errno_text(err));
        return std::nullopt;
    }
    return bytes;
}

}  // namespace

pcap_writer::pcap_writer(pcap_writer&& other) noexcept
    : file_(std::exchange(other.file_, nullptr)),
      good_(other.good_),
      records_(other.records_),
      sources_(other.sources_),
      pending_ps_(other.pending_ps_),
      pending_(std::move(other.pending_)) {}

pcap_writer& pcap_writer::operator=(pcap_writer&& other) noexcept {
    if (this != &other) {
        close();
        file_ = std::exchange(other.file_, nullptr);
        good_ = other.good_;
        records_ = other.records_;
        sources_ = other.sources_;
        pending_ps_ = other.pending_ps_;
        pending_ = std::move(other.pending_);
    }
    return *this;
}

pcap_writer::~pcap_writer() {
    close();
}

bool pcap_writer::open(const std::string& path, std::string* error) {
    close();
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) {
        set_error(error, path + ": cannot create pcap file: " + errno_text(errno));
        return false;
    }
    std::setvbuf(f, nullptr, _IOFBF, kWriteBuffer);
    std::uint8_t hdr[kFileHeaderSize] = {};
    put_le32(hdr, kPcapMagicNanoseconds);
    put_le16(hdr + 4, 2);  // version 2.4
    put_le16(hdr + 6, 4);
    // thiszone and sigfigs stay 0
    put_le32(hdr + 16, kPcapSnaplen);
    put_le32(hdr + 20, kPcapLinktypeEthernet);
    if (std::fwrite(hdr, 1, sizeof hdr, f) != sizeof hdr) {
        const int err = errno;
        std::fclose(f);
        set_error(error, path + ": cannot write pcap header: " + errno_text(err));
        return false;
    }
    file_ = f;
    good_ = true;
    records_ = 0;
    return true;
}

void pcap_writer::write(std::uint64_t time_ns, const std::uint8_t* frame, std::size_t len) {
    if (file_ == nullptr) return;
    const std::size_t captured = len < kPcapSnaplen ? len : kPcapSnaplen;
    std::uint8_t rec[kRecordHeaderSize];
    put_le32(rec, static_cast<std::uint32_t>(time_ns / 1000000000u));
    put_le32(rec + 4, static_cast<std::uint32_t>(time_ns % 1000000000u));
    put_le32(rec + 8, static_cast<std::uint32_t>(captured));
    put_le32(rec + 12, static_cast<std::uint32_t>(len));
    const bool ok = std::fwrite(rec, 1, sizeof rec, file_) == sizeof rec &&
                    (captured == 0 || std::fwrite(frame, 1, captured, file_) == captured);
    if (!ok) good_ = false;
    ++records_;
}

void pcap_writer::write_at(std::uint64_t time_ps, unsigned source, const std::uint8_t* frame, std::size_t len) {
    if (file_ == nullptr) return;
    if (!pending_.empty() && time_ps != pending_ps_) flush_pending();
    pending_ps_ = time_ps;
    std::vector<std::uint8_t> bytes;
    if (!spare_.empty()) {
        bytes = std::move(spare_.back());
        spare_.pop_back();
    }
    bytes.assign(frame, frame + len);
    pending_.push_back({source, std::move(bytes)});
}

void pcap_writer::flush_pending() {
    std::stable_sort(pending_.begin(), pending_.end(),
                     [](const pending_frame& a, const pending_frame& b) { return a.source < b.source; });
    for (pending_frame& f : pending_) {
        write(pending_ps_ / 1000, f.bytes.data(), f.bytes.size());
        spare_.push_back(std::move(f.bytes));
    }
    pending_.clear();
}

void pcap_writer::close() {
    if (file_ == nullptr) return;
    flush_pending();
    if (std::fclose(file_) != 0) good_ = false;
    file_ = nullptr;
}

std::optional<std::vector<pcap_record>> read_pcap(const std::string& path, std::string* error, parse_error* code) {
    const auto bytes = load_file(path, error, code);
    if (!bytes) return std::nullopt;
    const std::uint8_t* p = bytes->data();
    const std::size_t size = bytes->size();
    if (size < kFileHeaderSize) {
        set_code(code, parse_error::short_input);
        set_error(error, path + ": truncated pcap file header (" + std::to_string(size) + " of 24 bytes)");
        return std::nullopt;
    }
    const std::uint32_t magic = get_le32(p);
    if (magic == kPcapngMagic) {
        set_code(code, parse_error::unsupported);
        set_error(error, path + ": pcapng files are not supported, only classic pcap");
        return std::nullopt;
    }
    const auto fmt = detect_format(magic);
    if (!fmt) {
        char hex[16];
        std::snprintf(hex, sizeof hex, "0x%08x", static_cast<unsigned>(magic));
        set_code(code, parse_error::bad_magic);
        set_error(error, path + ": not a pcap file (magic " + hex + ")");
        return std::nullopt;
    }
    auto u32 = [&](std::size_t at) { return fmt->big_endian ? get_be32(p + at) : get_le32(p + at); };
    const std::uint64_t frac_to_ns = fmt->nanoseconds ? 1 : 1000;

    std::vector<pcap_record> records;
    std::size_t at = kFileHeaderSize;
    while (at < size) {
        const std::string where =
            path + ": record " + std::to_string(records.size() + 1) + " at offset " + std::to_string(at);
        if (size - at < kRecordHeaderSize) {
            set_code(code, parse_error::short_input);
            set_error(error, where + ": truncated record header");
            return std::nullopt;
        }
        const std::uint32_t incl_len = u32(at + 8);
        if (incl_len > kMaxRecordLength) {
            set_code(code, parse_error::bad_length);
            set_error(error, where + ": captured length " + std::to_string(incl_len) + " is implausible");
            return std::nullopt;
        }
        if (size - at - kRecordHeaderSize < incl_len) {
            set_code(code, parse_error::short_input);
            set_error(error, where + ": truncated record data (" + std::to_string(size - at - kRecordHeaderSize) +
                                 " of " + std::to_string(incl_len) + " bytes)");
            return std::nullopt;
        }
        pcap_record rec;
        rec.time_ns = std::uint64_t{u32(at)} * 1000000000u + std::uint64_t{u32(at + 4)} * frac_to_ns;
        rec.original_length = u32(at + 12);
        const std::uint8_t* data = p + at + kRecordHeaderSize;
        rec.data.assign(data, data + incl_len);
        records.push_back(std::move(rec));
        at += kRecordHeaderSize + incl_len;
    }
    set_code(code, parse_error::none);
    return records;
}

}  // namespace rnic::proto
