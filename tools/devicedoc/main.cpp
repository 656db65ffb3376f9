// rnic-devicedoc: writes the device specification (docs/device.md) generated from
// models/rnic/regmap.h, after checking the register map's layout for consistency.
//   rnic-devicedoc                 Markdown to stdout
//   rnic-devicedoc -o FILE         Markdown to FILE
//   rnic-devicedoc --check         only the layout checks
//   rnic-devicedoc --c-header [-o FILE]  the C header of the same tables (driver/linux/rnic_regs.h)
// Exit status 0 when consistent, 1 when a check fails (nothing written), 2 on bad usage or I/O.
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

#include "device_doc.h"

int main(int argc, char** argv) {
    std::string out;
    bool check_only = false, c_header = false;
    for (int i = 1; i < argc; ++i) {
        if ((std::strcmp(argv[i], "-o") == 0 || std::strcmp(argv[i], "--output") == 0) && i + 1 < argc) {
            out = argv[++i];
        } else if (std::strcmp(argv[i], "--check") == 0) {
            check_only = true;
        } else if (std::strcmp(argv[i], "--c-header") == 0) {
            c_header = true;
        } else {
            std::cerr << "usage: rnic-devicedoc [--c-header] [-o FILE] [--check]\n"
                         "Writes docs/device.md from models/rnic/regmap.h: "
                      << rnic::devicedoc::kRegenerateCommand
                      << "\nand the C drivers' header with --c-header: " << rnic::devicedoc::kRegenerateHeaderCommand
                      << "\n";
            return std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0 ? 0 : 2;
        }
    }
    const auto problems = rnic::devicedoc::check_device();
    for (const std::string& p : problems) std::cerr << "rnic-devicedoc: regmap.h: " << p << "\n";
    if (!problems.empty()) return 1;
    if (check_only) return 0;
    const std::string doc = c_header ? rnic::devicedoc::render_c_header() : rnic::devicedoc::render();
    if (out.empty()) {
        std::cout << doc;
        return std::cout ? 0 : 2;
    }
    std::ofstream f(out, std::ios::binary);
    f << doc;
    if (!f) {
        std::cerr << "rnic-devicedoc: cannot write " << out << "\n";
        return 2;
    }
    return 0;
}
