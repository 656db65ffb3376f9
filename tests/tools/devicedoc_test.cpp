// rnic-devicedoc: docs/device.md is what the generator makes of models/rnic/regmap.h, the register
// map's layout is consistent, and the checks catch broken layouts.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "device_doc.h"

namespace rnic::test {
namespace {

namespace rm = regmap;
namespace dd = devicedoc;

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The first line where two texts differ, for the failure message.
std::string first_difference(const std::string& want, const std::string& got) {
    std::istringstream a(want), b(got);
    std::string la, lb;
    for (int line = 1;; ++line) {
        const bool ha = static_cast<bool>(std::getline(a, la));
        const bool hb = static_cast<bool>(std::getline(b, lb));
        if (!ha && !hb) return "(same lines, different line endings)";
        if (!ha || !hb || la != lb) {
            return "line " + std::to_string(line) + ":\n  generated: " + (ha ? la : "<end>") +
                   "\n  docs/device.md: " + (hb ? lb : "<end>");
        }
    }
}

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& x : v) s += "  " + x + "\n";
    return s;
}

bool mentions(const std::vector<std::string>& problems, const std::string& what) {
    for (const std::string& p : problems) {
        if (p.find(what) != std::string::npos) return true;
    }
    return false;
}

TEST(DeviceDoc, CommittedDocumentIsWhatTheGeneratorWrites) {
    const std::string committed = slurp(std::string(RNIC_SOURCE_DIR) + "/docs/device.md");
    ASSERT_FALSE(committed.empty()) << "docs/device.md missing: run `" << dd::kRegenerateCommand << "`";
    const std::string generated = dd::render();
    EXPECT_TRUE(committed == generated)
        << "docs/device.md is out of date with models/rnic/regmap.h; regenerate it with\n  " << dd::kRegenerateCommand
        << "\n(from the source directory, after building) and commit it. First difference, "
        << first_difference(generated, committed);
}

TEST(DeviceDoc, CommittedCHeaderIsWhatTheGeneratorWrites) {
    const std::string committed = slurp(std::string(RNIC_SOURCE_DIR) + "/driver/linux/rnic_regs.h");
    ASSERT_FALSE(committed.empty()) << "driver/linux/rnic_regs.h missing: run `" << dd::kRegenerateHeaderCommand << "`";
    const std::string generated = dd::render_c_header();
    EXPECT_TRUE(committed == generated)
        << "driver/linux/rnic_regs.h is out of date with models/rnic/regmap.h; regenerate it with\n  "
        << dd::kRegenerateHeaderCommand
        << "\n(from the source directory, after building) and commit it. First difference, "
        << first_difference(generated, committed);
}

TEST(DeviceDoc, CHeaderCompilesAsStrictCAndAgreesWithTheRegisterMap) {
    // A C program that includes the header and checks a few values against regmap.h's, built with the
    // system C compiler as strict C99 with warnings as errors.
    const std::string dir = ::testing::TempDir();
    const std::string src = dir + "rnic_regs_check.c", bin = dir + "rnic_regs_check";
    {
        std::ofstream f(src);
        f << "#include \"" << RNIC_SOURCE_DIR << "/driver/linux/rnic_regs.h\"\n"
          << "int main(void) {\n"
          << "    int bad = 0;\n"
          << "    bad |= RNIC_REG_CMDQ_PROD != " << rm::CMDQ_PROD << "u;\n"
          << "    bad |= RNIC_SEND_WQE_SIZE != " << rm::kSendWqeSize << "u;\n"
          << "    bad |= RNIC_SEND_WQE_REMOTE_STAG != " << rm::sqe_off::remote_stag << "u;\n"
          << "    bad |= RNIC_CQE_OWNER != " << rm::cqe_off::owner << "u;\n"
          << "    bad |= RNIC_CMD_CONNECT != " << static_cast<int>(rm::command::connect) << "u;\n"
          << "    bad |= RNIC_QP_DOORBELL(1800) != " << rm::qp_doorbell(1800) << "u;\n"
          << "    bad |= RNIC_CQE_OWNER_PHASE != " << rm::cqe_owner::kPhase << "u;\n"
          << "    bad |= RNIC_PCI_VENDOR_ID != 0x1a4e;\n"
          << "    return bad;\n}\n";
    }
    ASSERT_EQ(std::system(("cc -std=c99 -pedantic -Wall -Wextra -Werror -o " + bin + " " + src).c_str()), 0);
    EXPECT_EQ(std::system(bin.c_str()), 0) << "a value in the header differs from regmap.h";
}

TEST(DeviceDoc, ToolWritesTheSameDocumentAndPassesItsCheck) {
    const std::string out = ::testing::TempDir() + "device.md";
    ASSERT_EQ(std::system((std::string(RNIC_DEVICEDOC) + " -o " + out).c_str()), 0);
    EXPECT_TRUE(slurp(out) == dd::render());
    EXPECT_EQ(std::system((std::string(RNIC_DEVICEDOC) + " --check").c_str()), 0);
    EXPECT_NE(std::system((std::string(RNIC_DEVICEDOC) + " --bogus 2>/dev/null").c_str()), 0);
    const std::string header = ::testing::TempDir() + "rnic_regs.h";
    ASSERT_EQ(std::system((std::string(RNIC_DEVICEDOC) + " --c-header -o " + header).c_str()), 0);
    EXPECT_TRUE(slurp(header) == dd::render_c_header());
}

TEST(DeviceDoc, DocumentNamesEveryRegisterCommandOpcodeAndField) {
    const std::string doc = dd::render();
    char row[128];
    for (const rm::register_desc& r : rm::kRegisters) {
        std::snprintf(row, sizeof row, "| 0x%04x | `%s` | 0x%08x |", r.offset, r.name, r.reset);
        EXPECT_NE(doc.find(row), std::string::npos) << row;
    }
    for (const rm::command_desc& c : rm::kCommands) {
        std::snprintf(row, sizeof row, "| %d | `%s` |", c.opcode, c.name);
        EXPECT_NE(doc.find(row), std::string::npos) << row;
    }
    for (const rm::value_desc& v : rm::kWrOpcodes)
        EXPECT_NE(doc.find(std::string("`") + v.name + "`"), std::string::npos) << v.name;
    for (const rm::value_desc& v : rm::kCqeStatuses)
        EXPECT_NE(doc.find(std::string("`") + v.name + "`"), std::string::npos) << v.name;
    for (const rm::layout_desc& l : rm::kLayouts) {
        for (std::size_t i = 0; i < l.count; ++i) {
            const rm::field_desc& f = l.fields[i];
            auto hex2 = [](std::size_t v) {
                char b[16];
                std::snprintf(b, sizeof b, "0x%02zx", v);
                return std::string(b);
            };
            const std::string range =
                f.size == 1 ? hex2(f.offset) : hex2(f.offset) + ".." + hex2(f.offset + f.size - 1);
            const std::string want = "| " + range + " | `" + f.name + "` |";
            EXPECT_NE(doc.find(want), std::string::npos) << l.name << ": " << want;
        }
    }
    // The doorbell formulas and the MSI-X placement, with the numbers the code uses.
    EXPECT_NE(doc.find("| SQ producer of QP *n* | 0x1000 + 16·*n* + 0x0 |"), std::string::npos);
    EXPECT_NE(doc.find("| CQ arm of CQ *n* | 0x8000 + 8·*n* + 0x4 |"), std::string::npos);
    EXPECT_NE(doc.find("| 0xc000 | 0xcfff | MSI-X table |"), std::string::npos);
    EXPECT_NE(doc.find("| 0xd000 | 0xdfff | MSI-X PBA |"), std::string::npos);
    EXPECT_NE(doc.find(dd::kRegenerateCommand), std::string::npos);
}

TEST(DeviceDoc, RegisterMapLayoutIsConsistent) {
    const std::vector<std::string> problems = dd::check_device();
    EXPECT_TRUE(problems.empty()) << joined(problems);
    // The decode windows the device model uses (models/rnic/rnic.cpp) and the regions documented agree.
    EXPECT_EQ(rm::kBar0Regions[1].offset, rm::kQpDoorbellBase);
    EXPECT_EQ(rm::kBar0Regions[1].offset + rm::kBar0Regions[1].size, rm::kCqDoorbellBase);
    EXPECT_EQ(rm::kBar0Regions[2].offset + rm::kBar0Regions[2].size, rm::kMsixTableOffset);
    // The tables are the constants the code uses.
    EXPECT_EQ(rm::kSendWqeFields[9].offset, rm::sqe_off::imm_data);
    EXPECT_EQ(rm::sqe_off::operand, rm::sqe_off::imm_data);
    EXPECT_EQ(rm::cqe_owner::kPhase, 1u << 31);
    EXPECT_EQ(static_cast<int>(rm::command::query_qp), 10);
    EXPECT_STREQ(rm::to_string(rm::cmd_status::mpa_negotiation_failed), "MPA negotiation failed");
    EXPECT_STREQ(rm::to_string(rm::cqe_status::remote_invalid_request), "remote invalid request");
    EXPECT_STREQ(rm::to_string(rm::qp_state::rts), "rts");
}

// ---- the checks catch what they are for ----------------------------------------------------------

TEST(DeviceDocChecks, FieldPastTheStructureOrOverlappingIsCaught) {
    std::vector<rm::field_desc> cqe(std::begin(rm::kCqeFields), std::end(rm::kCqeFields));
    cqe.back().offset = 0x1e;  // owner runs past 32 bytes, and is misaligned
    rm::layout_desc l{"cqe", rm::kCqeSize, cqe.data(), cqe.size(), ""};
    auto p = dd::check_layout(l);
    EXPECT_TRUE(mentions(p, "cqe.owner: bytes 0x1e..0x21 run past")) << joined(p);
    EXPECT_TRUE(mentions(p, "cqe.owner: offset 0x1e not aligned")) << joined(p);

    cqe.assign(std::begin(rm::kCqeFields), std::end(rm::kCqeFields));
    cqe[4].offset = 0x0c;  // qpn on top of opcode/status
    l.fields = cqe.data();
    p = dd::check_layout(l);
    EXPECT_TRUE(mentions(p, "cqe.qpn overlaps opcode")) << joined(p);

    // An overlay is fine only where declared and exact.
    std::vector<rm::field_desc> sqe(std::begin(rm::kSendWqeFields), std::end(rm::kSendWqeFields));
    EXPECT_TRUE(dd::check_layout({"send_wqe", rm::kSendWqeSize, sqe.data(), sqe.size(), ""}).empty());
    sqe[10].overlays = "";
    p = dd::check_layout({"send_wqe", rm::kSendWqeSize, sqe.data(), sqe.size(), ""});
    EXPECT_TRUE(mentions(p, "send_wqe.operand overlaps imm_data")) << joined(p);
    sqe[10].overlays = "imm_data";
    sqe[10].size = 4;
    p = dd::check_layout({"send_wqe", rm::kSendWqeSize, sqe.data(), sqe.size(), ""});
    EXPECT_TRUE(mentions(p, "send_wqe.operand overlaps imm_data")) << joined(p);
    sqe[10].size = 8;
    sqe[10].overlays = "nothing";
    p = dd::check_layout({"send_wqe", rm::kSendWqeSize, sqe.data(), sqe.size(), ""});
    EXPECT_TRUE(mentions(p, "overlays unknown field nothing")) << joined(p);
}

TEST(DeviceDocChecks, BadRegistersAreCaught) {
    std::vector<rm::register_desc> regs(std::begin(rm::kRegisters), std::end(rm::kRegisters));
    EXPECT_TRUE(dd::check_registers(regs.data(), regs.size(), rm::kQpDoorbellBase).empty());
    regs[3].offset = 0x000a;  // STATUS misaligned
    regs[4].offset = 0x0004;  // INTR_CAUSE on VERSION
    regs[5].offset = 0x1000;  // CMDQ_BASE_LO in the QP doorbell window
    const auto p = dd::check_registers(regs.data(), regs.size(), rm::kQpDoorbellBase);
    EXPECT_TRUE(mentions(p, "register STATUS: offset 0xa not 4-byte aligned")) << joined(p);
    EXPECT_TRUE(mentions(p, "register INTR_CAUSE: offset 0x4 already used by VERSION")) << joined(p);
    EXPECT_TRUE(mentions(p, "register CMDQ_BASE_LO: offset 0x1000 outside the register block")) << joined(p);
}

TEST(DeviceDocChecks, DoorbellWindowsReachingTheMsixPagesAreCaught) {
    dd::doorbell_layout d = dd::device_doorbells();
    EXPECT_TRUE(dd::check_doorbells(d).empty());
    d.max_cq = 2049;  // one CQ more than the window holds: its slot is in the MSI-X table page
    auto p = dd::check_doorbells(d);
    EXPECT_TRUE(mentions(p, "MSI-X table page (0xc000..0xd000) overlap CQ doorbells (0x8000..0xc008)")) << joined(p);
    d = dd::device_doorbells();
    d.qp_stride = 512;  // 64 QPs x 512 bytes runs into the CQ window
    p = dd::check_doorbells(d);
    EXPECT_TRUE(mentions(p, "CQ doorbells (0x8000..0x8200) overlap QP doorbells")) << joined(p);
    d = dd::device_doorbells();
    d.rq = d.sq;
    d.arm = 8;  // outside the CQ's 8-byte slot
    p = dd::check_doorbells(d);
    EXPECT_TRUE(mentions(p, "QP doorbells: both doorbells at the same offset")) << joined(p);
    EXPECT_TRUE(mentions(p, "CQ doorbells: doorbell outside its slot")) << joined(p);
    d = dd::device_doorbells();
    d.msix_pba = 0xd800;
    p = dd::check_doorbells(d);
    EXPECT_TRUE(mentions(p, "must each start a page")) << joined(p);

    std::vector<rm::bar_region> regions(std::begin(rm::kBar0Regions), std::end(rm::kBar0Regions));
    EXPECT_TRUE(dd::check_regions(regions.data(), regions.size(), rm::kBar0Size).empty());
    regions[2].size = 0x4800;     // CQ doorbells into the MSI-X table
    regions[4].offset = 0x1f800;  // PBA past the end of BAR0
    p = dd::check_regions(regions.data(), regions.size(), rm::kBar0Size);
    EXPECT_TRUE(mentions(p, "BAR0 region MSI-X table overlaps CQ doorbells")) << joined(p);
    EXPECT_TRUE(mentions(p, "BAR0 region MSI-X PBA: 0x1f800 + 0x1000 not inside BAR0")) << joined(p);
}

TEST(DeviceDocChecks, BadBitsValuesAndCommandsAreCaught) {
    const rm::bitfield_desc bits[] = {{"a", 0, 3, ""}, {"b", 2, 1, ""}, {"c", 30, 4, ""}};
    auto p = dd::check_bits("W", bits, 3);
    EXPECT_TRUE(mentions(p, "W.b overlaps a")) << joined(p);
    EXPECT_TRUE(mentions(p, "W.c: bits 33:30 outside the 32-bit word")) << joined(p);

    const rm::value_desc values[] = {{"x", 1, ""}, {"y", 1, ""}, {"z", 6, ""}};
    p = dd::check_values("flag", values, 3, true);
    EXPECT_TRUE(mentions(p, "flag y: value 0x1 already used by x")) << joined(p);
    EXPECT_TRUE(mentions(p, "flag z: 0x6 is not a single bit")) << joined(p);

    std::vector<rm::command_desc> cmds(std::begin(rm::kCommands), std::end(rm::kCommands));
    EXPECT_TRUE(dd::check_commands(cmds.data(), cmds.size()).empty());
    cmds[2].params = "p0 SQ address; p6 extra";
    cmds[3].opcode = 1;
    p = dd::check_commands(cmds.data(), cmds.size());
    EXPECT_TRUE(mentions(p, "command create_qp: names parameter p6")) << joined(p);
    EXPECT_TRUE(mentions(p, "command reg_mr: opcode 1 already used by create_cq")) << joined(p);
}

}  // namespace
}  // namespace rnic::test
