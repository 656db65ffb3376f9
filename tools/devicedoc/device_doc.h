// The device specification (docs/device.md) generated from the one register-map declaration,
// models/rnic/regmap.h, and the consistency checks of that declaration's layout constants.
// Used by rnic-devicedoc and by its test (tests/tools/devicedoc_test.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "rnic/regmap.h"

namespace rnic::devicedoc {

// The command that regenerates docs/device.md, quoted at its top.
constexpr const char* kRegenerateCommand = "build/bin/rnic-devicedoc -o docs/device.md";

// The whole of docs/device.md.
std::string render();

// The command that regenerates the C drivers' header, quoted at its top.
constexpr const char* kRegenerateHeaderCommand = "build/bin/rnic-devicedoc --c-header -o driver/linux/rnic_regs.h";
// The whole of driver/linux/rnic_regs.h: the same tables as C macros (c_header.cpp).
std::string render_c_header();

// Each check returns the problems it found, one sentence each (empty: consistent). They take the
// tables as arguments so that tests can feed them broken copies.

// Fields inside the structure, no two sharing a byte (unless one `overlays` the other with the same
// offset and size), aligned to min(size, 4), unique names.
std::vector<std::string> check_layout(const regmap::layout_desc& layout);
// Bit fields inside a word of `word_bits`, not overlapping, unique names.
std::vector<std::string> check_bits(const std::string& word, const regmap::bitfield_desc* bits, std::size_t count,
                                    unsigned word_bits = 32);
// Registers 4-byte aligned, unique offsets and names, inside [0, block_end).
std::vector<std::string> check_registers(const regmap::register_desc* regs, std::size_t count, std::uint32_t block_end);
// Regions inside the BAR, not overlapping.
std::vector<std::string> check_regions(const regmap::bar_region* regions, std::size_t count, std::uint32_t bar_size);
// Unique names and values; with `flags`, each value a single bit.
std::vector<std::string> check_values(const std::string& what, const regmap::value_desc* values, std::size_t count,
                                      bool flags);
// Commands: unique names and opcodes, parameters only p0..p5.
std::vector<std::string> check_commands(const regmap::command_desc* commands, std::size_t count);

// Doorbell windows: the slots of every QP and CQ the device reports (CAP_MAX_QP/CQ) fit in their
// windows, the in-slot offsets are distinct and 4-byte aligned, and neither window reaches the
// MSI-X pages.
struct doorbell_layout {
    std::uint32_t qp_base, qp_stride, sq, rq, max_qp;
    std::uint32_t cq_base, cq_stride, consumer, arm, max_cq;
    std::uint32_t msix_table, msix_pba, msix_page, bar_size;
};
doorbell_layout device_doorbells();  // regmap's values
std::vector<std::string> check_doorbells(const doorbell_layout& d);

// Every check above on regmap.h's own tables, plus the MSI-X table/PBA sizing.
std::vector<std::string> check_device();

}  // namespace rnic::devicedoc
