#include "device_doc.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace rnic::devicedoc {

namespace rm = regmap;

namespace {

std::string hex(std::uint64_t v, int digits = 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%0*llx", digits, static_cast<unsigned long long>(v));
    return buf;
}

// "7" or "15:8" for a bit field.
std::string bit_range(unsigned lsb, unsigned width) {
    if (width == 1) return std::to_string(lsb);
    return std::to_string(lsb + width - 1) + ":" + std::to_string(lsb);
}

// "0x08" or "0x08..0x0f" for a byte range.
std::string byte_range(std::size_t offset, std::size_t size) {
    if (size <= 1) return hex(offset, 2);
    return hex(offset, 2) + ".." + hex(offset + size - 1, 2);
}

// Markdown table cells must not break the row.
std::string cell(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '|')
            out += "\\|";
        else
            out += c;
    }
    return out;
}

std::string field_type(std::size_t size) {
    switch (size) {
    case 1:
        return "u8";
    case 2:
        return "u16";
    case 4:
        return "u32";
    case 8:
        return "u64";
    default:
        return std::to_string(size) + " bytes";
    }
}

void table_header(std::ostringstream& o, std::initializer_list<const char*> columns) {
    o << "|";
    for (const char* c : columns) o << " " << c << " |";
    o << "\n|";
    for (std::size_t i = 0; i < columns.size(); ++i) o << "---|";
    o << "\n";
}

void fields_table(std::ostringstream& o, const rm::layout_desc& l) {
    table_header(o, {"bytes", "field", "type", "description"});
    // Fields by offset, with the reserved gaps between them.
    std::vector<const rm::field_desc*> f;
    for (std::size_t i = 0; i < l.count; ++i) f.push_back(&l.fields[i]);
    std::stable_sort(f.begin(), f.end(),
                     [](const rm::field_desc* a, const rm::field_desc* b) { return a->offset < b->offset; });
    std::size_t next = 0;
    for (const rm::field_desc* d : f) {
        if (d->offset > next) o << "| " << byte_range(next, d->offset - next) << " | *reserved* | | zero |\n";
        std::string desc = d->description;
        // The type column says it already: "u32 bytes" -> "bytes", "u32, echoed" -> "echoed".
        const std::string type = field_type(d->size);
        if (desc.compare(0, type.size(), type) == 0 && desc.size() > type.size() + 1 &&
            (desc[type.size()] == ' ' || desc[type.size()] == ',')) {
            desc = desc.substr(desc[type.size()] == ',' ? type.size() + 2 : type.size() + 1);
        }
        if (*d->overlays != '\0') desc += " (shares the bytes of `" + std::string(d->overlays) + "`)";
        o << "| " << byte_range(d->offset, d->size) << " | `" << d->name << "` | " << field_type(d->size) << " | "
          << cell(desc) << " |\n";
        next = std::max(next, d->offset + d->size);
    }
    if (next < l.size) o << "| " << byte_range(next, l.size - next) << " | *reserved* | | zero |\n";
    o << "\n";
}

void bits_table(std::ostringstream& o, const rm::bitfield_desc* b, std::size_t n) {
    table_header(o, {"bits", "field", "description"});
    std::vector<const rm::bitfield_desc*> v;
    for (std::size_t i = 0; i < n; ++i) v.push_back(&b[i]);
    std::stable_sort(v.begin(), v.end(),
                     [](const rm::bitfield_desc* x, const rm::bitfield_desc* y) { return x->lsb > y->lsb; });
    for (const rm::bitfield_desc* d : v) {
        o << "| " << bit_range(d->lsb, d->width) << " | `" << d->name << "` | " << cell(d->description) << " |\n";
    }
    o << "\n";
}

void values_table(std::ostringstream& o, const rm::value_desc* v, std::size_t n, bool flags, int digits = 0) {
    table_header(o, {flags ? "mask" : "value", "name", "description"});
    for (std::size_t i = 0; i < n; ++i) {
        std::string value = flags ? hex(v[i].value, digits) : std::to_string(v[i].value);
        if (!flags && v[i].value >= 0x10) value += " (" + hex(v[i].value) + ")";
        o << "| " << value << " | `" << v[i].name << "` | " << cell(v[i].description) << " |\n";
    }
    o << "\n";
}

template <typename T, std::size_t N>
constexpr std::size_t count(const T (&)[N]) {
    return N;
}

const rm::layout_desc& layout_named(const char* name) {
    for (const rm::layout_desc& l : rm::kLayouts) {
        if (std::string(l.name) == name) return l;
    }
    return rm::kLayouts[0];  // not reached: every name below is in kLayouts (checked by the test)
}

void add(std::vector<std::string>& all, std::vector<std::string> more) {
    all.insert(all.end(), more.begin(), more.end());
}

}  // namespace

std::string render() {
    std::ostringstream o;
    o << "# RNIC device specification\n\n"
      << "<!-- Generated from models/rnic/regmap.h by rnic-devicedoc; do not edit by hand. Regenerate with\n"
      << "     " << kRegenerateCommand << "\n"
      << "     (rnic-tools-tests fails while this file differs from what the generator writes). -->\n\n"
      << "The software interface of the iWARP RNIC as the device model (`models/rnic`), the firmware\n"
      << "(`firmware/`) and the driver (`driver/`) use it, all from the one declaration in\n"
      << "`models/rnic/regmap.h` (namespace `rnic::regmap`). All multi-byte values are little-endian;\n"
      << "\"host address\" means an address in host memory as the device's DMA sees it.\n\n"
      << "Regenerate after changing regmap.h: `" << kRegenerateCommand << "`.\n\n";

    // ---- BAR0
    o << "## BAR0\n\n"
      << "BAR0 is " << hex(rm::kBar0Size) << " bytes (" << rm::kBar0Size / 1024 << " KiB) of 32-bit registers: the "
      << "device takes aligned 32-bit accesses only and answers others with an error response (the MSI-X pages, "
      << "decoded by the host-bus endpoint, also take aligned 64-bit accesses). Offsets not listed read as zero and "
      << "ignore writes.\n\n";
    table_header(o, {"offset", "end", "region", "description"});
    for (const rm::bar_region& r : rm::kBar0Regions) {
        o << "| " << hex(r.offset, 4) << " | " << hex(r.offset + r.size - 1, 4) << " | " << r.name << " | "
          << cell(r.description) << " |\n";
    }
    const std::uint32_t last =
        rm::kBar0Regions[count(rm::kBar0Regions) - 1].offset + rm::kBar0Regions[count(rm::kBar0Regions) - 1].size;
    if (last < rm::kBar0Size) {
        o << "| " << hex(last, 4) << " | " << hex(rm::kBar0Size - 1, 4) << " | reserved | reads as zero |\n";
    }
    o << "\n";

    // ---- Registers
    o << "## Registers\n\n"
      << "Access: `ro` read-only (writes ignored), `rw` read/write, `wo` write-only (reads as zero), `rw1c` "
      << "read, write 1 to clear.\n\n";
    table_header(o, {"offset", "name", "reset", "access", "description"});
    for (const rm::register_desc& r : rm::kRegisters) {
        o << "| " << hex(r.offset, 4) << " | `" << r.name << "` | " << hex(r.reset, 8) << " | " << rm::to_string(r.acc)
          << " | " << cell(r.description) << " |\n";
    }
    o << "\n### CTRL (" << hex(rm::CTRL, 4) << ")\n\n";
    bits_table(o, rm::kCtrlBits, count(rm::kCtrlBits));
    o << "### STATUS (" << hex(rm::STATUS, 4) << ")\n\n";
    bits_table(o, rm::kStatusBits, count(rm::kStatusBits));
    o << "### INTR_CAUSE (" << hex(rm::INTR_CAUSE, 4) << ")\n\n"
      << "Bit *v* is set when the device raises MSI-X vector *v* (vectors 0.." << rm::kMsixVectors - 1
      << "); writing 1 clears it.\n\n";

    // ---- Doorbells
    o << "## Doorbells\n\n"
      << "Doorbells are write-only 32-bit registers; the value is a free-running index (mod 2^32), the "
      << "number of entries the driver has produced or consumed in total, not a ring slot.\n\n";
    table_header(o, {"doorbell", "offset", "value"});
    o << "| SQ producer of QP *n* | " << hex(rm::kQpDoorbellBase) << " + " << rm::kQpDoorbellStride << "·*n* + "
      << hex(rm::kSqDoorbell) << " | send-queue slots written (a masked atomic counts two) |\n"
      << "| RQ producer of QP *n* | " << hex(rm::kQpDoorbellBase) << " + " << rm::kQpDoorbellStride << "·*n* + "
      << hex(rm::kRqDoorbell) << " | receive WQEs written |\n"
      << "| CQ consumer of CQ *n* | " << hex(rm::kCqDoorbellBase) << " + " << rm::kCqDoorbellStride << "·*n* + "
      << hex(rm::kCqConsumer) << " | CQEs consumed: frees ring slots for the device |\n"
      << "| CQ arm of CQ *n* | " << hex(rm::kCqDoorbellBase) << " + " << rm::kCqDoorbellStride << "·*n* + "
      << hex(rm::kCqArm)
      << " | any value: raise the CQ's MSI-X vector once: at once if CQEs wait beyond the consumer index, else at "
      << "the next CQE |\n"
      << "| command ring producer | " << hex(rm::CMDQ_PROD, 4) << " (`CMDQ_PROD`) | commands written |\n\n"
      << "The QP window has room for " << (rm::kCqDoorbellBase - rm::kQpDoorbellBase) / rm::kQpDoorbellStride
      << " QPs and the CQ window for " << (rm::kMsixTableOffset - rm::kCqDoorbellBase) / rm::kCqDoorbellStride
      << " CQs; QPs " << rm::kQpDoorbellLowCount << ".." << rm::kMaxQps - 1 << " ring in the second QP window at "
      << hex(rm::kQpDoorbellHighBase) << " + " << rm::kQpDoorbellStride << "·(*n* − " << rm::kQpDoorbellLowCount
      << "). The device reports how many it has in `CAP_MAX_QP` and `CAP_MAX_CQ`.\n\n";

    // ---- MSI-X
    o << "## MSI-X\n\n"
      << rm::kMsixVectors << " vectors. Vector " << rm::kMsixCommandVector << " signals firmware command "
      << "completion; completion queue *cqn* uses vector 1 + *cqn* mod " << rm::kMsixVectors - 1
      << " (the driver passes it to `create_cq`). The table (" << rm::kMsixVectors << " entries of "
      << rm::kMsixEntrySize << " bytes at " << hex(rm::kMsixTableOffset) << ") and the Pending Bit Array ("
      << rm::kMsixPbaSize << " bytes at " << hex(rm::kMsixPbaOffset) << ") each own a " << rm::kMsixPageSize / 1024
      << " KiB page (PCIe Base Specification §6.1.4, §7.7.2). Every vector is masked at reset.\n\n"
      << "### MSI-X table entry (" << rm::kMsixEntrySize << " bytes)\n\n";
    fields_table(o, layout_named("msix_entry"));
    o << "Vector Control bits:\n\n";
    bits_table(o, rm::kMsixControlBits, count(rm::kMsixControlBits));

    // ---- Command queue
    o << "## Firmware command queue\n\n"
      << "A ring of " << rm::kCommandSize << "-byte commands in host memory (`CMDQ_BASE_LO/HI`, `CMDQ_ENTRIES`). "
      << "The driver writes a command into slot *prod* mod entries with `status` = " << hex(rm::kStatusPending)
      << " (pending), then writes the new producer index to `CMDQ_PROD`. The firmware fetches commands in order "
      << "(`CMDQ_CONS`), executes them, writes `status` and `result` back into the slot and raises MSI-X vector "
      << rm::kMsixCommandVector << ". `connect` and `accept` complete later, when the connection is up or has "
      << "failed; other commands may complete in the meantime.\n\n"
      << "### Command layout (" << rm::kCommandSize << " bytes)\n\n";
    fields_table(o, layout_named("command"));
    o << "### Commands\n\n";
    table_header(o, {"opcode", "command", "parameters", "result", "description"});
    for (const rm::command_desc& c : rm::kCommands) {
        o << "| " << int(c.opcode) << " | `" << c.name << "` | " << cell(*c.params ? c.params : "none") << " | "
          << cell(*c.result ? c.result : "0") << " | " << cell(c.description) << " |\n";
    }
    o << "\n### A waiting peer (`next_peer`, " << rm::kPeerRecordSize << " bytes, then the private data)\n\n"
      << "A connection manager that must see a peer before it has a QP for it (the Linux RDMA core's "
      << "`IW_CM_EVENT_CONNECT_REQUEST`) polls `next_peer`; each peer whose MPA Request has arrived is reported "
      << "once, and `accept` or `reject` with its handle in p2 answers it. Without a handle they serve the oldest "
      << "waiting peer, as before. `connect` with `kConnectPrivateData` (p3 bit 31) sends p5[47:32] bytes of "
      << "private data (at most " << rm::kMaxConnPrivateData << ") from p4 in its Request and gets the Reply's "
      << "private data back at p4, its length in p5.\n\n"
      << "`unlisten` closes a port again (the connection manager's `destroy_listen`). Afterwards the port is as "
      << "one that never listened, except that a peer's SYN draws a reset at once (RFC 9293 §3.10.7.1) where a "
      << "SYN to a port that never listened is dropped (the platform's start-up tolerance, README). Connections "
      << "an `accept` or `reject` already took, and QPs in RTS, are not touched; half-open handshakes and "
      << "backlog peers no `accept` or `reject` took (their MPA Request arrived, reported by `next_peer` or not, "
      << "or not yet) are reset, so their peers' `connect` fails at once instead of waiting for an MPA Reply. "
      << "`accept` and `reject` open their port again. Unlistening a port that does not listen completes with "
      << "`not_listening`.\n\n";
    fields_table(o, layout_named("peer_record"));
    o << "Peer flags:\n\n";
    values_table(o, rm::kPeerFlags, count(rm::kPeerFlags), true, 2);
    o << "\n### Command status codes\n\n";
    values_table(o, rm::kCmdStatuses, count(rm::kCmdStatuses), false);

    // ---- VI/TCP
    o << "### VI/TCP connections (rnic.framing = vitcp)\n\n"
      << "With VI/TCP (seed 003, draft-dicecco-vitcp-01) `connect` and `accept` run the VI/TCP connection "
      << "establishment (§4) instead of the MPA Request/Reply: the active side's firmware sends a ConnectRequest "
      << "with the device's proposal (`rnic.vitcp.*`: reliability level, CRC and Urgent Marker options, MTU, RDMA "
      << "Read Window; the Called Discriminator is the remote port, big-endian), the passive side answers "
      << "ConnectAccept (the lesser MTU and RDMA Read Window, the CRC if both asked), ConnectReject (a `reject` "
      << "command, or levels or peer-to-peer bits that differ; the reason in the IS Error Code) or ConnectNoMatch "
      << "(another discriminator: the accept waits for the next peer). A Reject or NoMatch completes `connect` with "
      << "`connection_refused`, a malformed answer with `mpa_negotiation_failed`. A ConnectRequest that is not "
      << "valid (another Version, a malformed option, any other rule of §3.2/§3.3) is answered with a ConnectReject "
      << "naming the reason (IS Error Code 5 unsupported version, 6 malformed option, 4 otherwise) and the `accept` "
      << "completes with `mpa_negotiation_failed`; unknown options are ignored (§3.3). VI/TCP has no private data: "
      << "`connect` with `kConnectPrivateData` is `bad_parameter`, except in the test mode "
      << "`rnic.vitcp.raw_connect_requests`, where the p5[47:32] bytes at p4 are sent as the whole ConnectRequest "
      << "and a ConnectReject or ConnectNoMatch comes back at p4 (its length in p5) with `connection_refused`. "
      << "The agreed RDMA Read Window "
      << "becomes the QP's IRD and ORD. Atomic work requests complete with `bad_opcode`. The driver's VIPL-style "
      << "layer (`driver/vipl.h`: VipCreateVi, VipRegisterMem, VipConnectRequest, VipConnectWait + "
      << "VipConnectAccept, VipPostSend, VipPostRecv, VipSendDone/Wait, VipRecvDone/Wait) maps a VI onto a QP with "
      << "its own send and receive CQs, a memory handle onto an STag and a descriptor onto one work request and "
      << "its completion status.\n\n";

    // ---- QP states
    o << "## Queue-pair states\n\n"
      << "The RDMAC verbs model behind RFC 5040 §6. `query_qp` returns the state and the last Terminate in one "
      << "word; a QP error CQE carries the same word in `imm_data`.\n\n";
    values_table(o, rm::kQpStates, count(rm::kQpStates), false);
    o << "### query_qp result word\n\n";
    bits_table(o, rm::kQueryQpResultBits, count(rm::kQueryQpResultBits));

    // ---- Memory regions
    o << "## Memory-region access flags\n\n"
      << "`reg_mr` p2 bits 31:0 (the protection domain in bits 63:32).\n\n";
    values_table(o, rm::kMrAccessFlags, count(rm::kMrAccessFlags), true, 2);

    // ---- Rings
    o << "## Rings\n\n"
      << "Send queue, receive queue and completion queue are rings in host memory with a power-of-two number "
      << "of fixed-size entries; the driver gives their address and size to `create_qp` / `create_cq`. The "
      << "device reads work requests between its consumer index and the producer index of the last doorbell, "
      << "and writes completions in ring order.\n\n";

    o << "### Send queue work request (" << rm::kSendWqeSize << " bytes)\n\n";
    fields_table(o, layout_named("send_wqe"));
    o << "#### Work-request opcodes\n\n";
    values_table(o, rm::kWrOpcodes, count(rm::kWrOpcodes), false);
    o << "#### Work-request flags\n\n";
    values_table(o, rm::kWrFlags, count(rm::kWrFlags), true, 2);
    o << "#### Masked atomic, second slot (" << rm::kSendWqeSize << " bytes)\n\n"
      << "A work request with the `masked` flag takes the next send-queue slot too (opcode `atomic_masks`); the "
      << "doorbell counts both slots and the completion's `wqe_index` names the second.\n\n";
    fields_table(o, layout_named("atomic_masks"));

    o << "### Receive queue work request (" << rm::kRecvWqeSize << " bytes)\n\n";
    fields_table(o, layout_named("recv_wqe"));

    o << "### DMA scatter/gather element (" << rm::kSgeSize << " bytes)\n\n"
      << "A list or ring of these in host memory describes the host side of one DMA transfer; the DMA engine "
      << "processes them in order until the count or an element with `last`, and skips zero lengths.\n\n";
    fields_table(o, layout_named("sge"));
    o << "SGE flags:\n\n";
    values_table(o, rm::kSgeFlags, count(rm::kSgeFlags), true, 2);

    o << "### Completion queue entry (" << rm::kCqeSize << " bytes)\n\n"
      << "The device writes entries in ring order. The driver owns an entry when the owner word's phase bit "
      << "equals 1 on its first pass over the ring, 0 on the second, and so on: new entries show without a "
      << "register read.\n\n";
    fields_table(o, layout_named("cqe"));
    o << "Owner word (" << byte_range(rm::cqe_off::owner, 4) << "):\n\n";
    bits_table(o, rm::kCqeOwnerBits, count(rm::kCqeOwnerBits));
    o << "Flags (owner bits " << bit_range(rm::cqe_off::kFlagsShift, 8) << "):\n\n";
    values_table(o, rm::kCqeFlags, count(rm::kCqeFlags), true, 2);
    o << "QP error entry: opcode " << hex(rm::kCqeOpcodeQpError, 2) << ", written to the QP's receive CQ (receive "
      << "bit set) when the QP leaves RTS because of a Terminate (sent or received) or a fatal stream error; "
      << "`status` gives the class, `imm_data` the query_qp result word, `wqe_index` the RQ consumer index.\n\n";
    o << "#### Completion statuses\n\n";
    values_table(o, rm::kCqeStatuses, count(rm::kCqeStatuses), false);
    return o.str();
}

// ---- checks --------------------------------------------------------------------------------------

std::vector<std::string> check_layout(const rm::layout_desc& l) {
    std::vector<std::string> p;
    const std::string where = std::string(l.name) + ".";
    std::set<std::string> names;
    for (std::size_t i = 0; i < l.count; ++i) {
        const rm::field_desc& f = l.fields[i];
        if (!names.insert(f.name).second) p.push_back(where + f.name + ": name used twice");
        if (f.size == 0) p.push_back(where + f.name + ": size 0");
        if (f.offset + f.size > l.size) {
            p.push_back(where + f.name + ": bytes " + byte_range(f.offset, f.size) + " run past the structure's " +
                        std::to_string(l.size) + " bytes");
        }
        const std::size_t align = std::min<std::size_t>(f.size, 4);
        if (align != 0 && f.offset % align != 0) {
            p.push_back(where + f.name + ": offset " + hex(f.offset) + " not aligned to " + std::to_string(align));
        }
        for (std::size_t j = 0; j < i; ++j) {
            const rm::field_desc& g = l.fields[j];
            const bool overlap = f.offset < g.offset + g.size && g.offset < f.offset + f.size;
            if (!overlap) continue;
            const bool declared = (std::string(f.overlays) == g.name || std::string(g.overlays) == f.name) &&
                                  f.offset == g.offset && f.size == g.size;
            if (!declared) p.push_back(where + f.name + " overlaps " + g.name);
        }
        if (*f.overlays != '\0') {
            bool found = false;
            for (std::size_t j = 0; j < l.count; ++j) found = found || std::string(l.fields[j].name) == f.overlays;
            if (!found) p.push_back(where + f.name + ": overlays unknown field " + f.overlays);
        }
    }
    return p;
}

std::vector<std::string> check_bits(const std::string& word, const rm::bitfield_desc* bits, std::size_t n,
                                    unsigned word_bits) {
    std::vector<std::string> p;
    std::set<std::string> names;
    for (std::size_t i = 0; i < n; ++i) {
        const rm::bitfield_desc& b = bits[i];
        if (!names.insert(b.name).second) p.push_back(word + "." + b.name + ": name used twice");
        if (b.width == 0 || b.lsb + b.width > word_bits) {
            p.push_back(word + "." + b.name + ": bits " + bit_range(b.lsb, b.width) + " outside the " +
                        std::to_string(word_bits) + "-bit word");
        }
        for (std::size_t j = 0; j < i; ++j) {
            const rm::bitfield_desc& c = bits[j];
            if (b.lsb < c.lsb + c.width && c.lsb < b.lsb + b.width)
                p.push_back(word + "." + b.name + " overlaps " + c.name);
        }
    }
    return p;
}

std::vector<std::string> check_registers(const rm::register_desc* regs, std::size_t n, std::uint32_t block_end) {
    std::vector<std::string> p;
    std::map<std::uint32_t, std::string> offsets;
    std::set<std::string> names;
    for (std::size_t i = 0; i < n; ++i) {
        const rm::register_desc& r = regs[i];
        if (r.offset % 4 != 0)
            p.push_back(std::string("register ") + r.name + ": offset " + hex(r.offset) + " not 4-byte aligned");
        if (r.offset + 4 > block_end) {
            p.push_back(std::string("register ") + r.name + ": offset " + hex(r.offset) +
                        " outside the register block (ends at " + hex(block_end) + ")");
        }
        if (!offsets.emplace(r.offset, r.name).second) {
            p.push_back(std::string("register ") + r.name + ": offset " + hex(r.offset) + " already used by " +
                        offsets[r.offset]);
        }
        if (!names.insert(r.name).second) p.push_back(std::string("register ") + r.name + ": name used twice");
    }
    return p;
}

std::vector<std::string> check_regions(const rm::bar_region* regions, std::size_t n, std::uint32_t bar_size) {
    std::vector<std::string> p;
    for (std::size_t i = 0; i < n; ++i) {
        const rm::bar_region& r = regions[i];
        const std::uint64_t end = std::uint64_t{r.offset} + r.size;
        if (r.size == 0 || end > bar_size) {
            p.push_back(std::string("BAR0 region ") + r.name + ": " + hex(r.offset) + " + " + hex(r.size) +
                        " not inside BAR0 (" + hex(bar_size) + " bytes)");
        }
        for (std::size_t j = 0; j < i; ++j) {
            const rm::bar_region& q = regions[j];
            if (r.offset < std::uint64_t{q.offset} + q.size && q.offset < end) {
                p.push_back(std::string("BAR0 region ") + r.name + " overlaps " + q.name);
            }
        }
    }
    return p;
}

std::vector<std::string> check_values(const std::string& what, const rm::value_desc* v, std::size_t n, bool flags) {
    std::vector<std::string> p;
    std::map<std::uint32_t, std::string> values;
    std::set<std::string> names;
    for (std::size_t i = 0; i < n; ++i) {
        if (!names.insert(v[i].name).second) p.push_back(what + " " + v[i].name + ": name used twice");
        if (!values.emplace(v[i].value, v[i].name).second) {
            p.push_back(what + " " + v[i].name + ": value " + hex(v[i].value) + " already used by " +
                        values[v[i].value]);
        }
        if (flags && (v[i].value == 0 || (v[i].value & (v[i].value - 1)) != 0)) {
            p.push_back(what + " " + v[i].name + ": " + hex(v[i].value) + " is not a single bit");
        }
    }
    return p;
}

std::vector<std::string> check_commands(const rm::command_desc* c, std::size_t n) {
    std::vector<std::string> p;
    std::map<int, std::string> opcodes;
    std::set<std::string> names;
    const std::size_t params = rm::kCommandFields[2].size / 8;  // `param`: 6 x u64
    for (std::size_t i = 0; i < n; ++i) {
        if (!names.insert(c[i].name).second) p.push_back(std::string("command ") + c[i].name + ": name used twice");
        if (!opcodes.emplace(c[i].opcode, c[i].name).second) {
            p.push_back(std::string("command ") + c[i].name + ": opcode " + std::to_string(c[i].opcode) +
                        " already used by " + opcodes[c[i].opcode]);
        }
        const std::string text = c[i].params;
        for (std::size_t at = text.find('p'); at != std::string::npos; at = text.find('p', at + 1)) {
            const bool word_start = at == 0 || text[at - 1] == ' ' || text[at - 1] == ';';
            if (!word_start || at + 1 >= text.size() || text[at + 1] < '0' || text[at + 1] > '9') continue;
            if (static_cast<std::size_t>(text[at + 1] - '0') >= params) {
                p.push_back(std::string("command ") + c[i].name + ": names parameter p" + text[at + 1] +
                            " (there are " + std::to_string(params) + ")");
            }
        }
    }
    return p;
}

doorbell_layout device_doorbells() {
    std::uint32_t max_qp = 0, max_cq = 0;
    for (const rm::register_desc& r : rm::kRegisters) {
        if (r.offset == rm::CAP_MAX_QP) max_qp = r.reset;
        if (r.offset == rm::CAP_MAX_CQ) max_cq = r.reset;
    }
    return {rm::kQpDoorbellBase,  rm::kQpDoorbellStride, rm::kSqDoorbell,   rm::kRqDoorbell, max_qp,
            rm::kCqDoorbellBase,  rm::kCqDoorbellStride, rm::kCqConsumer,   rm::kCqArm,      max_cq,
            rm::kMsixTableOffset, rm::kMsixPbaOffset,    rm::kMsixPageSize, rm::kBar0Size};
}

std::vector<std::string> check_doorbells(const doorbell_layout& d) {
    std::vector<std::string> p;
    auto slot = [&p](const char* what, std::uint32_t a, std::uint32_t b, std::uint32_t stride) {
        if (a % 4 != 0 || b % 4 != 0)
            p.push_back(std::string(what) + ": doorbell offsets in the slot not 4-byte aligned");
        if (a == b) p.push_back(std::string(what) + ": both doorbells at the same offset in the slot");
        if (a + 4 > stride || b + 4 > stride)
            p.push_back(std::string(what) + ": doorbell outside its slot of " + std::to_string(stride) + " bytes");
    };
    slot("QP doorbells", d.sq, d.rq, d.qp_stride);
    slot("CQ doorbells", d.consumer, d.arm, d.cq_stride);
    const std::uint64_t qp_end = std::uint64_t{d.qp_base} + std::uint64_t{d.qp_stride} * d.max_qp;
    const std::uint64_t cq_end = std::uint64_t{d.cq_base} + std::uint64_t{d.cq_stride} * d.max_cq;
    struct range {
        const char* name;
        std::uint64_t begin, end;
    };
    const range ranges[] = {{"QP doorbells", d.qp_base, qp_end},
                            {"CQ doorbells", d.cq_base, cq_end},
                            {"MSI-X table page", d.msix_table, std::uint64_t{d.msix_table} + d.msix_page},
                            {"MSI-X PBA page", d.msix_pba, std::uint64_t{d.msix_pba} + d.msix_page}};
    for (std::size_t i = 0; i < 4; ++i) {
        if (ranges[i].end > d.bar_size) p.push_back(std::string(ranges[i].name) + " run past the end of BAR0");
        for (std::size_t j = 0; j < i; ++j) {
            if (ranges[i].begin < ranges[j].end && ranges[j].begin < ranges[i].end) {
                p.push_back(std::string(ranges[i].name) + " (" + hex(ranges[i].begin) + ".." + hex(ranges[i].end) +
                            ") overlap " + ranges[j].name + " (" + hex(ranges[j].begin) + ".." + hex(ranges[j].end) +
                            ")");
            }
        }
    }
    if (d.msix_table % d.msix_page != 0 || d.msix_pba % d.msix_page != 0) {
        p.push_back("MSI-X table and PBA must each start a page of their own");
    }
    return p;
}

std::vector<std::string> check_device() {
    std::vector<std::string> p;
    add(p,
        check_registers(rm::kRegisters, count(rm::kRegisters), rm::kBar0Regions[0].offset + rm::kBar0Regions[0].size));
    add(p, check_regions(rm::kBar0Regions, count(rm::kBar0Regions), rm::kBar0Size));
    add(p, check_doorbells(device_doorbells()));
    for (const rm::layout_desc& l : rm::kLayouts) {
        add(p, check_layout(l));
        if (l.size == 0 || (l.size & (l.size - 1)) != 0) {
            p.push_back(std::string(l.name) + ": size " + std::to_string(l.size) +
                        " is not a power of two (ring slots)");
        }
    }
    add(p, check_bits("CTRL", rm::kCtrlBits, count(rm::kCtrlBits)));
    add(p, check_bits("STATUS", rm::kStatusBits, count(rm::kStatusBits)));
    add(p, check_bits("MSI-X vector control", rm::kMsixControlBits, count(rm::kMsixControlBits)));
    add(p, check_bits("query_qp result", rm::kQueryQpResultBits, count(rm::kQueryQpResultBits)));
    add(p, check_bits("CQE owner", rm::kCqeOwnerBits, count(rm::kCqeOwnerBits)));
    add(p, check_commands(rm::kCommands, count(rm::kCommands)));
    add(p, check_values("command status", rm::kCmdStatuses, count(rm::kCmdStatuses), false));
    add(p, check_values("QP state", rm::kQpStates, count(rm::kQpStates), false));
    add(p, check_values("work-request opcode", rm::kWrOpcodes, count(rm::kWrOpcodes), false));
    add(p, check_values("work-request flag", rm::kWrFlags, count(rm::kWrFlags), true));
    add(p, check_values("MR access flag", rm::kMrAccessFlags, count(rm::kMrAccessFlags), true));
    add(p, check_values("peer flag", rm::kPeerFlags, count(rm::kPeerFlags), true));
    add(p, check_values("CQE flag", rm::kCqeFlags, count(rm::kCqeFlags), true));
    add(p, check_values("CQE status", rm::kCqeStatuses, count(rm::kCqeStatuses), false));
    add(p, check_values("SGE flag", rm::kSgeFlags, count(rm::kSgeFlags), true));

    // Values that must fit the fields that carry them.
    for (const rm::value_desc& s : rm::kQpStates) {
        if (s.value > rm::query_qp_result::kStateMask)
            p.push_back(std::string("QP state ") + s.name + " does not fit state_mask");
    }
    for (const rm::value_desc& f : rm::kCqeFlags) {
        if (f.value > 0xff)
            p.push_back(std::string("CQE flag ") + f.name + " does not fit the owner word's 8 flag bits");
    }
    for (const rm::value_desc& o : rm::kWrOpcodes) {
        if (o.value == rm::kCqeOpcodeQpError)
            p.push_back(std::string("work-request opcode ") + o.name + " collides with the QP error CQE opcode");
    }
    if (rm::kMsixVectors * rm::kMsixEntrySize > rm::kMsixPageSize) p.push_back("MSI-X table larger than its page");
    if (rm::kMsixPbaSize * 8 < rm::kMsixVectors || rm::kMsixPbaSize > rm::kMsixPageSize)
        p.push_back("MSI-X PBA size wrong");
    if (rm::kMsixVectors > 32) p.push_back("INTR_CAUSE has one bit per vector: at most 32 vectors");
    if (rm::kMsixCommandVector >= rm::kMsixVectors) p.push_back("command vector outside the MSI-X table");
    return p;
}

}  // namespace rnic::devicedoc
