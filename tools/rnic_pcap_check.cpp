// rnic-pcap-check: follows every TCP stream of a classic pcap capture, finds the MPA Request/Reply
// exchange, reframes the FPDUs (with or without Markers; or the IFT frames of seed 001 with
// --framing ift, or the RDMA/TCP segments of seed 000 with --framing rdmatcp), verifies every CRC and DDP/RDMAP header and prints a summary per connection
// (proto/stream_check.h does the work). --framing vitcp checks VI/TCP (seed 003) captures instead:
// the CE exchange, then every VI segment (proto/stream_check_vitcp.h).
//
// Exit status: 0 no error, 1 at least one error, 2 usage error or unreadable capture.
#include <cstdio>
#include <cstring>
#include <string>

#include "proto/stream_check.h"
#include "proto/stream_check_vitcp.h"

namespace {

void usage(std::FILE* to) {
    std::fputs(
        "usage: rnic-pcap-check [--verbose] [--no-checksum] [--lenient] [--framing mpa|ift|rdmatcp|vitcp] FILE\n"
        "  Checks the iWARP (MPA/DDP/RDMAP) traffic of every TCP connection in a pcap file.\n"
        "  --verbose      list every FPDU and the TCP counters\n"
        "  --framing F    framing after the MPA Request/Reply: mpa (RFC 5044 FPDUs, default) or ift\n"
        "                 (draft-williams-iwarp-ift-00 frames with Header and Payload CRC; rnic.framing=ift)\n"
        "                 or rdmatcp (draft-williams-rdmatcp-00 segments: CRC-32, Connection ID, message\n"
        "                 order; rnic.framing=rdmatcp) or vitcp (draft-dicecco-vitcp-01: the CE exchange\n"
        "                 instead of MPA, VI segments, optional CRC, message order; rnic.framing=vitcp)\n"
        "  --no-checksum  accept segments with bad IPv4/TCP checksums (checksum offload captures)\n"
        "  --lenient      accept non-zero reserved bits (e.g. Linux siw's MPA Res bit 0x08)\n"
        "Exit status: 0 no error, 1 errors found, 2 usage error or unreadable file.\n",
        to);
}

}  // namespace

int main(int argc, char** argv) {
    rnic::proto::check::options options;
    bool verbose = false;
    bool vitcp = false;  // VI/TCP has its own start-up: a checker of its own
    const char* file = nullptr;
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        if (std::strcmp(a, "--verbose") == 0 || std::strcmp(a, "-v") == 0) {
            verbose = true;
        } else if (std::strcmp(a, "--no-checksum") == 0) {
            options.verify_checksums = false;
        } else if (std::strcmp(a, "--lenient") == 0) {
            options.strict_reserved_bits = false;
        } else if (std::strcmp(a, "--framing") == 0 || std::strncmp(a, "--framing=", 10) == 0) {
            const char* value = a[9] == '=' ? a + 10 : (i + 1 < argc ? argv[++i] : "");
            if (std::strcmp(value, "mpa") == 0) {
                options.framing = rnic::proto::check::framing::mpa;
            } else if (std::strcmp(value, "ift") == 0) {
                options.framing = rnic::proto::check::framing::ift;
            } else if (std::strcmp(value, "rdmatcp") == 0) {
                options.framing = rnic::proto::check::framing::rdmatcp;
            } else if (std::strcmp(value, "vitcp") == 0) {
                vitcp = true;
            } else {
                std::fprintf(stderr, "rnic-pcap-check: --framing needs mpa, ift, rdmatcp or vitcp, got \"%s\"\n",
                             value);
                usage(stderr);
                return 2;
            }
        } else if (std::strcmp(a, "--help") == 0 || std::strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (a[0] == '-' && a[1] != '\0') {
            std::fprintf(stderr, "rnic-pcap-check: unknown option %s\n", a);
            usage(stderr);
            return 2;
        } else if (file != nullptr) {
            std::fprintf(stderr, "rnic-pcap-check: more than one FILE given\n");
            usage(stderr);
            return 2;
        } else {
            file = a;
        }
    }
    if (file == nullptr) {
        usage(stderr);
        return 2;
    }
    if (vitcp) {
        std::string read_error;
        const auto records = rnic::proto::read_pcap(file, &read_error);
        if (!records) {
            std::fprintf(stderr, "rnic-pcap-check: %s: %s\n", file, read_error.c_str());
            return 2;
        }
        const auto report = rnic::proto::check::check_vitcp_capture(*records, options.verify_checksums);
        std::fputs(rnic::proto::check::format_vitcp_report(report, verbose).c_str(), stdout);
        return report.error_count() == 0 ? 0 : 1;
    }
    options.keep_fpdu_log = verbose;
    if (verbose) options.max_issues = 1000;
    std::string error;
    const auto report = rnic::proto::check::check_pcap_file(file, options, &error);
    if (!report) {
        std::fprintf(stderr, "rnic-pcap-check: %s\n", error.c_str());  // the message names the file
        return 2;
    }
    std::printf("%s: ", file);
    std::fputs(rnic::proto::check::format_report(*report, verbose).c_str(), stdout);
    return report->ok() ? 0 : 1;
}
