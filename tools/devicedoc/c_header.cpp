// The C header of the device interface for drivers written in C (driver/linux/rnic_regs.h),
// generated from the same regmap.h tables as docs/device.md: macros only (no structures, whose
// padding a C compiler could choose), so the header is valid C89 and kernel C alike.
#include <cctype>
#include <cstdio>
#include <sstream>

#include "device_doc.h"

namespace rnic::devicedoc {

namespace rm = regmap;

namespace {

// "QP doorbells (high)" -> "QP_DOORBELLS_HIGH": letters and digits, one underscore between words.
std::string upper(const std::string& s) {
    std::string out;
    for (char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (std::isalnum(u))
            out += static_cast<char>(std::toupper(u));
        else if (!out.empty() && out.back() != '_')
            out += '_';
    }
    while (!out.empty() && out.back() == '_') out.pop_back();
    return out;
}

std::string hex(std::uint64_t v, int digits = 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%0*llx", digits, static_cast<unsigned long long>(v));
    return buf;
}

// A C comment must not end early.
std::string comment(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '*' && i + 1 < s.size() && s[i + 1] == '/') {
            out += "* /";
            ++i;
        } else if (static_cast<unsigned char>(s[i]) >= 0x80) {
            // Keep the header ASCII: "§" and friends become "S".
            if ((static_cast<unsigned char>(s[i]) & 0xc0) == 0xc0) out += "S";
        } else {
            out += s[i];
        }
    }
    return out;
}

void define(std::ostringstream& o, const std::string& name, const std::string& value, const std::string& what = "") {
    o << "#define " << name;
    for (std::size_t n = name.size(); n < 40; ++n) o << ' ';
    o << ' ' << value;
    if (!what.empty()) o << " /* " << comment(what) << " */";
    o << "\n";
}

void values(std::ostringstream& o, const std::string& prefix, const rm::value_desc* v, std::size_t n, bool flags) {
    for (std::size_t i = 0; i < n; ++i) {
        define(o, prefix + upper(v[i].name), flags ? hex(v[i].value) + "u" : std::to_string(v[i].value) + "u",
               v[i].description);
    }
}

void bits(std::ostringstream& o, const std::string& prefix, const rm::bitfield_desc* b, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        const std::string name = prefix + upper(b[i].name);
        if (b[i].width == 1) {
            define(o, name, "(1u << " + std::to_string(b[i].lsb) + ")", b[i].description);
        } else {
            define(o, name + "_SHIFT", std::to_string(b[i].lsb) + "u", b[i].description);
            define(o, name + "_MASK", hex(((1ull << b[i].width) - 1) << b[i].lsb) + "u");
        }
    }
}

template <typename T, std::size_t N>
constexpr std::size_t count(const T (&)[N]) {
    return N;
}

}  // namespace

std::string render_c_header() {
    std::ostringstream o;
    o << "/* SPDX-License-Identifier: GPL-2.0 OR MIT */\n"
      << "/*\n"
      << " * The iWARP RNIC's device interface for C drivers: BAR0 registers and their bits, doorbells,\n"
      << " * MSI-X, the layouts of commands, work requests and completions in host memory (byte offsets and\n"
      << " * sizes, little-endian), command codes and status values.\n"
      << " *\n"
      << " * Generated from models/rnic/regmap.h by rnic-devicedoc; do not edit by hand. Regenerate with\n"
      << " *   " << kRegenerateHeaderCommand << "\n"
      << " * (rnic-tools-tests fails while this file differs from what the generator writes).\n"
      << " * The prose of the interface is docs/device.md, generated from the same tables.\n"
      << " */\n"
      << "#ifndef RNIC_REGS_H\n#define RNIC_REGS_H\n\n";

    o << "/* PCI identity (the ID register) and BAR0 */\n";
    std::uint32_t id = 0;
    for (const rm::register_desc& r : rm::kRegisters) {
        if (r.offset == rm::ID) id = r.reset;
    }
    define(o, "RNIC_PCI_VENDOR_ID", hex(id >> 16, 4), "");
    define(o, "RNIC_PCI_DEVICE_ID", hex(id & 0xffff, 4), "");
    define(o, "RNIC_BAR0_SIZE", hex(rm::kBar0Size) + "u", "bytes of 32-bit registers; aligned 32-bit accesses only");

    o << "\n/* Registers: offset in BAR0, and reset value */\n";
    for (const rm::register_desc& r : rm::kRegisters) {
        define(o, "RNIC_REG_" + upper(r.name), hex(r.offset, 4) + "u",
               std::string(rm::to_string(r.acc)) + ": " + r.description);
        define(o, "RNIC_REG_" + upper(r.name) + "_RESET", hex(r.reset, 8) + "u");
    }
    o << "\n/* CTRL bits */\n";
    bits(o, "RNIC_CTRL_", rm::kCtrlBits, count(rm::kCtrlBits));
    o << "\n/* STATUS bits */\n";
    bits(o, "RNIC_STATUS_", rm::kStatusBits, count(rm::kStatusBits));

    o << "\n/* BAR0 regions */\n";
    for (const rm::bar_region& r : rm::kBar0Regions) {
        define(o, "RNIC_BAR0_" + upper(r.name) + "_OFFSET", hex(r.offset) + "u", r.description);
        define(o, "RNIC_BAR0_" + upper(r.name) + "_SIZE", hex(r.size) + "u");
    }

    o << "\n/* Doorbells: free-running indices (mod 2^32), write-only */\n";
    define(o, "RNIC_QP_DOORBELL_BASE", hex(rm::kQpDoorbellBase) + "u");
    define(o, "RNIC_QP_DOORBELL_STRIDE", std::to_string(rm::kQpDoorbellStride) + "u");
    define(o, "RNIC_QP_DOORBELL_HIGH_BASE", hex(rm::kQpDoorbellHighBase) + "u",
           "QPs from RNIC_QP_DOORBELL_LOW_COUNT up");
    define(o, "RNIC_QP_DOORBELL_LOW_COUNT", std::to_string(rm::kQpDoorbellLowCount) + "u");
    define(o, "RNIC_SQ_DOORBELL", hex(rm::kSqDoorbell) + "u", "in a QP's slot: send-queue producer index");
    define(o, "RNIC_RQ_DOORBELL", hex(rm::kRqDoorbell) + "u", "in a QP's slot: receive-queue producer index");
    define(o, "RNIC_MAX_QPS", std::to_string(rm::kMaxQps) + "u");
    define(o, "RNIC_QP_DOORBELL(qpn)",
           "((qpn) < RNIC_QP_DOORBELL_LOW_COUNT ? RNIC_QP_DOORBELL_BASE + (qpn) * RNIC_QP_DOORBELL_STRIDE : "
           "RNIC_QP_DOORBELL_HIGH_BASE + ((qpn) - RNIC_QP_DOORBELL_LOW_COUNT) * RNIC_QP_DOORBELL_STRIDE)",
           "BAR0 offset of QP qpn's slot");
    define(o, "RNIC_CQ_DOORBELL_BASE", hex(rm::kCqDoorbellBase) + "u");
    define(o, "RNIC_CQ_DOORBELL_STRIDE", std::to_string(rm::kCqDoorbellStride) + "u");
    define(o, "RNIC_CQ_CONSUMER", hex(rm::kCqConsumer) + "u", "in a CQ's slot: consumer index");
    define(o, "RNIC_CQ_ARM", hex(rm::kCqArm) + "u", "in a CQ's slot: any write arms the CQ's interrupt once");
    define(o, "RNIC_CQ_DOORBELL(cqn)", "(RNIC_CQ_DOORBELL_BASE + (cqn) * RNIC_CQ_DOORBELL_STRIDE)");

    o << "\n/* MSI-X */\n";
    define(o, "RNIC_MSIX_VECTORS", std::to_string(rm::kMsixVectors) + "u");
    define(o, "RNIC_MSIX_COMMAND_VECTOR", std::to_string(rm::kMsixCommandVector) + "u",
           "firmware command completion; CQ cqn uses 1 + cqn % (RNIC_MSIX_VECTORS - 1)");
    define(o, "RNIC_MSIX_TABLE_OFFSET", hex(rm::kMsixTableOffset) + "u");
    define(o, "RNIC_MSIX_PBA_OFFSET", hex(rm::kMsixPbaOffset) + "u");
    bits(o, "RNIC_MSIX_CTRL_", rm::kMsixControlBits, count(rm::kMsixControlBits));

    o << "\n/* Structures in host memory and BAR0: size, and each field's byte offset and size */\n";
    for (const rm::layout_desc& l : rm::kLayouts) {
        const std::string p = "RNIC_" + upper(l.name);
        o << "/* " << comment(l.description) << " */\n";
        define(o, p + "_SIZE", std::to_string(l.size) + "u");
        for (std::size_t i = 0; i < l.count; ++i) {
            const rm::field_desc& f = l.fields[i];
            define(o, p + "_" + upper(f.name), hex(f.offset, 2) + "u", f.description);
            define(o, p + "_" + upper(f.name) + "_LEN", std::to_string(f.size) + "u");
        }
    }
    define(o, "RNIC_COMMAND_PARAMS", "6u", "u64 parameters p0..p5 at RNIC_COMMAND_PARAM + 8 * i");

    o << "\n/* Firmware commands (RNIC_COMMAND_OPCODE) */\n";
    for (const rm::command_desc& c : rm::kCommands) {
        define(o, "RNIC_CMD_" + upper(c.name), std::to_string(c.opcode) + "u",
               std::string(c.description) + (c.params[0] != '\0' ? std::string(". Parameters: ") + c.params : "") +
                   (c.result[0] != '\0' ? std::string(". Result: ") + c.result : ""));
    }
    define(o, "RNIC_CMD_STATUS_PENDING", hex(rm::kStatusPending) + "u", "written by the driver before the doorbell");
    values(o, "RNIC_CMD_STATUS_", rm::kCmdStatuses, count(rm::kCmdStatuses), false);
    define(o, "RNIC_CONNECT_PEER_TO_PEER", "(1ull << 30)", "connect p3: the peer-to-peer model (RFC 6581)");
    define(o, "RNIC_MAX_REJECT_PRIVATE_DATA", std::to_string(rm::kMaxRejectPrivateData) + "u");
    define(o, "RNIC_CONNECT_PRIVATE_DATA", "(1ull << 31)",
           "connect p3: the Request carries p5[47:32] bytes from p4; the Reply's private data comes back there");
    define(o, "RNIC_MAX_CONN_PRIVATE_DATA", std::to_string(rm::kMaxConnPrivateData) + "u",
           "private data of an MPA Request or accepting Reply");
    values(o, "RNIC_PEER_FLAG_", rm::kPeerFlags, count(rm::kPeerFlags), true);
    define(o, "RNIC_MAX_PAGE_LIST_ENTRIES", std::to_string(rm::kMaxPageListEntries) + "u",
           "reg_mr_pages: pages per region at most");
    define(o, "RNIC_PAGE_LIST_POOL_ENTRIES", std::to_string(rm::kPageListPoolEntries) + "u",
           "reg_mr_pages: the device's page-list memory, shared by all regions");
    define(o, "RNIC_MIN_PAGE_SHIFT", std::to_string(rm::kMinPageShift) + "u", "reg_mr_pages: smallest page 4 KiB");
    define(o, "RNIC_MAX_PAGE_SHIFT", std::to_string(rm::kMaxPageShift) + "u", "reg_mr_pages: largest page 2 MiB");
    o << "\n/* Device counters (query_stats), u64 each in this order */\n";
    values(o, "RNIC_COUNTER_", rm::kDeviceCounters, count(rm::kDeviceCounters), false);
    define(o, "RNIC_COUNTERS", std::to_string(rm::kDeviceCounterCount) + "u");

    o << "\n/* Queue-pair states and the query_qp result word */\n";
    values(o, "RNIC_QP_STATE_", rm::kQpStates, count(rm::kQpStates), false);
    bits(o, "RNIC_QUERY_QP_", rm::kQueryQpResultBits, count(rm::kQueryQpResultBits));

    o << "\n/* Memory-region access flags (reg_mr p2) */\n";
    values(o, "RNIC_MR_", rm::kMrAccessFlags, count(rm::kMrAccessFlags), true);

    o << "\n/* Work requests */\n";
    values(o, "RNIC_WR_", rm::kWrOpcodes, count(rm::kWrOpcodes), false);
    values(o, "RNIC_WR_FLAG_", rm::kWrFlags, count(rm::kWrFlags), true);
    define(o, "RNIC_MAX_INLINE_DATA", std::to_string(rm::kMaxInlineData) + "u");
    values(o, "RNIC_SGE_FLAG_", rm::kSgeFlags, count(rm::kSgeFlags), true);

    o << "\n/* Completions */\n";
    values(o, "RNIC_CQE_FLAG_", rm::kCqeFlags, count(rm::kCqeFlags), true);
    bits(o, "RNIC_CQE_OWNER_", rm::kCqeOwnerBits, count(rm::kCqeOwnerBits));
    define(o, "RNIC_CQE_OPCODE_QP_ERROR", hex(rm::kCqeOpcodeQpError) + "u", "opcode of a QP error entry");
    values(o, "RNIC_CQE_STATUS_", rm::kCqeStatuses, count(rm::kCqeStatuses), false);

    o << "\n#endif /* RNIC_REGS_H */\n";
    return o.str();
}

}  // namespace rnic::devicedoc
