// rnic-pcap-check's text report of a CaptureReport (format_report): the capture's totals, each
// connection's negotiation, directions and issues; with verbose, every FPDU.
#include <string>
#include <vector>

#include "proto/stream_check.h"
#include "proto/stream_check_text.h"

namespace rnic::proto::check {

// ---------------------------------------------------------------------------------------------
// Text report

namespace {

void append_issues(std::string& out, const std::vector<issue>& issues, const char* indent) {
    for (const issue& i : issues)
        out += format("%s%s [%s] ", indent, to_string(i.severity), to_string(i.category)) + i.text + "\n";
}

std::string opcode_histogram(const direction_report& d) {
    std::string s;
    for (unsigned op = 0; op < d.opcodes.size(); ++op) {
        if (d.opcodes[op] == 0) continue;
        if (!s.empty()) s += ", ";
        s += format("%s (%u) %llu", opcode_name(op), op, static_cast<ull>(d.opcodes[op]));
        if (op == static_cast<unsigned>(ddp::opcode::atomic_request))
            s += format(" [FetchAdd %llu, CmpSwap %llu]", static_cast<ull>(d.atomic_fetch_add),
                        static_cast<ull>(d.atomic_compare_swap));
    }
    return s.empty() ? "none" : s;
}

std::string describe_fpdu(const fpdu_info& f) {
    std::string s = format("      frame %llu, stream byte %llu, %zu wire bytes, ULPDU %zu: ", static_cast<ull>(f.frame),
                           static_cast<ull>(f.stream_offset), f.wire_length, f.ulpdu_length);
    if (!f.header_ok) return s + "undecodable DDP header";
    const ddp::header& h = f.header;
    const unsigned op = static_cast<unsigned>(h.opcode);
    s += format("%s (%u)%s", opcode_name(op), op, h.last ? " L" : "");
    if (h.tagged)
        s += format(" STag 0x%08x TO 0x%llx", static_cast<unsigned>(h.stag), static_cast<ull>(h.tagged_offset));
    else
        s += format(" QN %u MSN %u MO %u", static_cast<unsigned>(h.queue), static_cast<unsigned>(h.msn),
                    static_cast<unsigned>(h.mo));
    if (carries_invalidate_stag(h.opcode)) s += format(" Inv-STag 0x%08x", static_cast<unsigned>(h.invalidate_stag));
    s += format(", %zu payload bytes", f.ulpdu_length - h.size());
    return s;
}

std::string describe_mpa(const mpa::request_reply& f) {
    std::string s = format("%s rev %u M%d C%d R%d", f.request ? "Request" : "Reply", static_cast<unsigned>(f.revision),
                           f.marker ? 1 : 0, f.crc ? 1 : 0, f.reject ? 1 : 0);
    if (f.enhanced) {
        s += format(" S IRD %u ORD %u", static_cast<unsigned>(f.ird), static_cast<unsigned>(f.ord));
        if (f.peer_to_peer) s += " P2P";
        if (f.zero_length_send_rtr) s += " RTR-Send";
        if (f.zero_length_write_rtr) s += " RTR-Write";
        if (f.zero_length_read_rtr) s += " RTR-Read";
    }
    s += format(", %zu bytes private data", f.private_data.size());
    return s;
}

}  // namespace

std::string format_report(const capture_report& r, bool verbose) {
    std::string out =
        format("capture: %llu frames (%llu IPv4/TCP, %llu other), %zu TCP connection%s\n", static_cast<ull>(r.frames),
               static_cast<ull>(r.tcp_frames), static_cast<ull>(r.other_frames), r.connections.size(),
               r.connections.size() == 1 ? "" : "s");
    append_issues(out, r.issues, "  ");
    std::uint64_t fpdus = 0, crcs = 0, framing = 0, header = 0, other = r.capture_errors;
    bool any_ift = false, any_rdmatcp = false;
    for (std::size_t n = 0; n < r.connections.size(); ++n) {
        const connection_report& c = r.connections[n];
        out += format("connection %zu: %s -> %s, frames %llu-%llu, %.6f s\n", n + 1,
                      endpoint(c.initiator_ip, c.initiator_port).c_str(),
                      endpoint(c.responder_ip, c.responder_port).c_str(), static_cast<ull>(c.first_frame),
                      static_cast<ull>(c.last_frame), static_cast<double>(c.last_time_ns - c.first_time_ns) * 1e-9);
        const bool ift = c.directions[k_to_responder].framing == framing::ift ||
                         c.directions[k_to_initiator].framing == framing::ift;
        any_ift = any_ift || ift;
        const bool rdmatcp = c.directions[k_to_responder].framing == framing::rdmatcp ||
                             c.directions[k_to_initiator].framing == framing::rdmatcp;
        any_rdmatcp = any_rdmatcp || rdmatcp;
        if (c.negotiated && rdmatcp) {
            out += format(
                "  MPA revision %u Request/Reply, then RDMA/TCP segments (CRC-32 0xDB710641, one Connection "
                "ID, no markers)\n",
                static_cast<unsigned>(c.revision));
        } else if (c.negotiated && ift) {
            out +=
                format("  MPA revision %u Request/Reply, then IFT framing (Header CRC and Payload CRC, no markers)\n",
                       static_cast<unsigned>(c.revision));
        } else if (c.negotiated) {
            out += format("  MPA revision %u, CRC %s, markers initiator->responder %s, responder->initiator %s\n",
                          static_cast<unsigned>(c.revision), c.crc ? "on" : "off",
                          c.directions[k_to_responder].markers ? "on" : "off",
                          c.directions[k_to_initiator].markers ? "on" : "off");
        } else if (c.rejected) {
            out += "  MPA: connection rejected by the responder\n";
        } else {
            out += "  MPA: no Full Operation (negotiation missing or failed)\n";
        }
        if (c.request) out += "    " + describe_mpa(*c.request) + "\n";
        if (c.reply) out += "    " + describe_mpa(*c.reply) + "\n";
        append_issues(out, c.issues, "  ");
        other += c.negotiation_errors;
        for (int di = 0; di < 2; ++di) {
            const direction_report& d = c.directions[static_cast<std::size_t>(di)];
            out += format(
                "  %s: %llu %s, %llu bytes (ULPDUs %llu), %llu messages\n",
                di == k_to_responder ? "initiator -> responder" : "responder -> initiator", static_cast<ull>(d.fpdus),
                d.framing == framing::ift       ? "IFT frames"
                : d.framing == framing::rdmatcp ? "RDMA/TCP segments"
                                                : "FPDUs",
                static_cast<ull>(d.fpdu_bytes), static_cast<ull>(d.ulpdu_bytes), static_cast<ull>(d.messages));
            out += "    opcodes: " + opcode_histogram(d) + "\n";
            out += format("    errors: %llu bad CRC, %llu framing, %llu header, %llu TCP\n",
                          static_cast<ull>(d.bad_crcs), static_cast<ull>(d.framing_errors),
                          static_cast<ull>(d.header_errors), static_cast<ull>(d.tcp_errors));
            if (verbose) {
                out += format(
                    "    tcp: %llu segments, %llu stream bytes, %llu retransmitted, %llu out of order, "
                    "%llu missing, %llu unchecked%s%s%s\n",
                    static_cast<ull>(d.segments), static_cast<ull>(d.stream_bytes),
                    static_cast<ull>(d.retransmitted_bytes), static_cast<ull>(d.out_of_order_segments),
                    static_cast<ull>(d.missing_bytes), static_cast<ull>(d.unchecked_bytes), d.syn ? ", SYN" : "",
                    d.fin ? ", FIN" : "", d.rst ? ", RST" : "");
            }
            for (const std::string& t : d.terminates) out += "    Terminate " + t + "\n";
            append_issues(out, d.issues, "    ");
            if (verbose)
                for (const fpdu_info& f : d.fpdu_log) out += describe_fpdu(f) + "\n";
            fpdus += d.fpdus;
            crcs += d.bad_crcs;
            framing += d.framing_errors;
            header += d.header_errors;
            other += d.tcp_errors;
        }
        const std::uint64_t e = c.errors(), w = c.warnings();
        const std::string result =
            e == 0 ? std::string("OK") : format("%llu error%s", static_cast<ull>(e), e == 1 ? "" : "s");
        out += "  result: " + result;
        out += w == 0 ? "\n" : format(", %llu warning%s\n", static_cast<ull>(w), w == 1 ? "" : "s");
    }
    out += format(
        "summary: %zu connection%s, %llu %s, %llu bad CRC, %llu framing errors, %llu header errors, "
        "%llu other errors, %llu warnings: %s\n",
        r.connections.size(), r.connections.size() == 1 ? "" : "s", static_cast<ull>(fpdus),
        any_ift       ? "IFT frames"
        : any_rdmatcp ? "RDMA/TCP segments"
                      : "FPDUs",
        static_cast<ull>(crcs), static_cast<ull>(framing), static_cast<ull>(header), static_cast<ull>(other),
        static_cast<ull>(r.warnings()), r.ok() ? "OK" : "FAILED");
    return out;
}

}  // namespace rnic::proto::check
