// libFuzzer target: read_pcap (classic pcap, micro-/nanosecond magic, either byte order) and, as
// its inverse, PcapWriter. read_pcap takes a path, so each input goes to an in-memory file
// (memfd, opened by read_pcap as /proc/self/fd/N); where memfd is not available, to scratch files
// in $TMPDIR or /tmp (one pair per process).
// Invariants:
//  - a file that reads has a 24-byte header followed by records that fill it exactly
//    (16-byte record header + captured bytes each);
//  - writing the records with PcapWriter and reading that back gives the same captured bytes,
//    original lengths and (when their seconds fit the 32-bit field) timestamps.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz_util.h"
#include "proto/pcap.h"

namespace proto = rnic::proto;

namespace {

// A file name for `what` that lives as long as the process: a memfd's /proc/self/fd path, or a
// scratch file.
std::string scratch_path(const char* what) {
    const int fd = memfd_create(what, 0);
    if (fd >= 0) return "/proc/self/fd/" + std::to_string(fd);
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/rnic-fuzz-pcap-" + what + "-" +
           std::to_string(static_cast<long>(getpid())) + ".pcap";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::string input_path = scratch_path("in");
    static const std::string output_path = scratch_path("out");
    std::FILE* f = std::fopen(input_path.c_str(), "wb");  // truncates (also a memfd)
    FUZZ_CHECK(f != nullptr);
    FUZZ_CHECK(size == 0 || std::fwrite(data, 1, size, f) == size);
    FUZZ_CHECK(std::fclose(f) == 0);

    std::string error;
    const auto records = proto::read_pcap(input_path, &error);
    if (!records) {
        FUZZ_CHECK(!error.empty());
        return 0;
    }
    std::size_t used = 24;
    for (const auto& r : records.value()) used += 16 + r.data.size();
    FUZZ_CHECK(used == size);

    proto::pcap_writer writer;
    FUZZ_CHECK(writer.open(output_path, &error));
    for (const auto& r : records.value()) {
        writer.write(r.time_ns, r.data.data(), r.data.size());
    }
    FUZZ_CHECK(writer.good() && writer.records() == records->size());
    writer.close();
    const auto again = proto::read_pcap(output_path, &error);
    FUZZ_CHECK(again && again->size() == records->size());
    for (std::size_t i = 0; i < records->size(); ++i) {
        const auto& a = (*records)[i];
        const auto& b = (*again)[i];
        // The writer cuts frames to its snaplen and records the length it was given as orig_len.
        const std::size_t kept = a.data.size() < proto::kPcapSnaplen ? a.data.size() : proto::kPcapSnaplen;
        FUZZ_CHECK(b.data.size() == kept && std::equal(b.data.begin(), b.data.end(), a.data.begin()));
        FUZZ_CHECK(b.original_length == a.data.size());
        if (a.time_ns / 1000000000u <= UINT32_MAX) FUZZ_CHECK(a.time_ns == b.time_ns);
    }
    return 0;
}
