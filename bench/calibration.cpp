// rnic-calibrate: the host-bus models against published figures (docs/calibration.md). Prints, for
// each calibration, the model's figure next to the reference and the deviation, and exits 1 if a
// figure is outside its tolerance. Deterministic (simulated time only); runs in about a second.
//
//   build/bin/rnic-calibrate            all tables
//   build/bin/rnic-calibrate --help
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/calibration_model.h"
#include "proto/mpa.h"

using namespace rnic;
using namespace rnic::calib;

namespace {

int failures = 0;

const char* verdict(double err, double tol) {
    if (std::fabs(err) <= tol) return "ok";
    ++failures;
    return "OUT";
}

sc_core::sc_time us(double v) {
    return sc_core::sc_time(v, sc_core::SC_US);
}

struct goodput_case {
    int gen, lanes;
    std::uint32_t mps;
    std::unique_ptr<rig> r;
};

struct pcix_case {
    const char* what;
    pcix_params p;
    bool read, mixed;
    std::uint32_t size;
    std::unique_ptr<rig> r;
    double mbps = 0;
};

// Marker-space position of the payload of consecutive 1448-byte placements in an FPDU stream:
// every FPDU carries 2 (ULPDU_Length) + 14 (tagged DDP/RDMAP header) bytes before its payload,
// 4 CRC bytes after, and a marker at every 512 of marker space.
std::vector<std::pair<std::uint32_t, std::vector<std::uint32_t>>> marker_layout(int count, std::uint32_t payload) {
    std::vector<std::pair<std::uint32_t, std::vector<std::uint32_t>>> out;
    std::uint64_t pos = 4;  // the first marker sits at 0
    auto advance = [&pos](std::uint64_t n) {
        while (n > 0) {
            const std::uint64_t to_marker = (pos / 512 + 1) * 512 - pos;
            if (n < to_marker) {
                pos += n;
                return;
            }
            n -= to_marker;
            pos += to_marker + 4;
        }
    };
    for (int i = 0; i < count; ++i) {
        advance(2 + 14);
        const auto first = static_cast<std::uint32_t>(pos);
        out.push_back({first, proto::mpa::marker_breaks(first, payload)});
        advance(payload);
        advance(4);
    }
    return out;
}

}  // namespace

int sc_main(int argc, char* argv[]) {
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--help") == 0) {
            std::printf(
                "usage: rnic-calibrate\n  prints the host-bus models against published figures "
                "(docs/calibration.md); exit status 1 if any is outside its tolerance\n");
            return 0;
        }
        std::fprintf(stderr, "rnic-calibrate: unknown argument '%s' (try --help)\n", argv[i]);
        return 2;
    }

    // ---- Elaboration: every rig first (SystemC elaborates once) ----
    host_memory_params default_mem;
    dma_params default_dma;
    rig latency_rig("lat", default_mem, make<pcie_endpoint>(pcie_params{}), &default_dma);

    std::vector<goodput_case> goodput;
    for (const auto& [gen, lanes] : std::vector<std::pair<int, int>>{{3, 8}, {4, 16}, {5, 16}}) {
        for (std::uint32_t mps : {128u, 256u, 512u}) {
            pcie_params p;
            p.generation = gen;
            p.lanes = lanes;
            p.max_payload = mps;
            p.max_read_request = 512;
            p.addr64 = true;  // pcie-bench's model default (64-bit addresses)
            p.tags = 256;     // 8-bit tags: enough in flight that the link, not the tags, limits
            const std::string n = "g" + std::to_string(gen) + "x" + std::to_string(lanes) + "m" + std::to_string(mps);
            goodput.push_back(
                {gen, lanes, mps,
                 std::make_unique<rig>(n.c_str(), calibration_memory(), make<pcie_endpoint>(p), nullptr)});
        }
    }
    pcie_params tag_p;
    tag_p.generation = 5;
    tag_p.lanes = 16;
    tag_p.addr64 = true;
    tag_p.tags = 32;
    rig tag_rig("tags", calibration_memory(), make<pcie_endpoint>(tag_p), nullptr);

    std::vector<pcix_case> pcix;
    auto add_pcix = [&pcix](const char* what, pcix_params p, bool read, bool mixed, std::uint32_t size) {
        const std::string n = "pcix" + std::to_string(pcix.size());
        pcix.push_back({what, p, read, mixed, size,
                        std::make_unique<rig>(n.c_str(), host_memory_params{}, make<pcix_bridge>(p), nullptr), 0.0});
    };
    pcix_params px;
    add_pcix("write 4 KiB, 512 B bursts", px, false, false, 4096);
    add_pcix("read 4 KiB, MMRBC 512", px, true, false, 4096);
    add_pcix("read+write 4 KiB, defaults", px, true, true, 4096);
    pcix_params big = px;
    big.max_write_burst = 4096;
    big.max_read_byte_count = 4096;
    add_pcix("write 4 KiB, 4 KiB bursts", big, false, false, 4096);
    add_pcix("read 4 KiB, MMRBC 4096", big, true, false, 4096);
    add_pcix("read+write 4 KiB, 4 KiB bursts", big, true, true, 4096);
    add_pcix("write 1448 B (a frame)", px, false, false, 1448);
    add_pcix("write 64 B", px, false, false, 64);

    dma_params frag_dma;
    frag_dma.markers = dma_marker_mode::fragment;
    rig m_skip_pcie("mskip_pcie", host_memory_params{}, make<pcie_endpoint>(pcie_params{}), &default_dma);
    rig m_frag_pcie("mfrag_pcie", host_memory_params{}, make<pcie_endpoint>(pcie_params{}), &frag_dma);
    rig m_skip_pcix("mskip_pcix", host_memory_params{}, make<pcix_bridge>(pcix_params{}), &default_dma);
    rig m_frag_pcix("mfrag_pcix", host_memory_params{}, make<pcix_bridge>(pcix_params{}), &frag_dma);

    sc_core::sc_start(sc_core::SC_ZERO_TIME);  // end of elaboration; time stays at 0

    // ---- 1. DMA read round trip, Gen3 x8, against pcie-bench ----
    std::printf("1. DMA read round trip, PCIe Gen3 x8, MPS 256, MRRS 512, idle link\n");
    std::printf("   model: DMA engine + PCIe endpoint + host memory at their defaults\n");
    std::printf("   reference: pcie-bench, NFP-6000 on Xeon E5-2620v3, LAT_DMA_RD median (SIGCOMM 2018 data set)\n");
    std::printf("   %8s %12s %12s %9s  %s\n", "bytes", "model ns", "ref ns", "dev %", "(tolerance 3%)");
    int k = 0;
    for (const latency_point& pt : pciebench_read_latency()) {
        const double ns = latency_rig.transfer(true, 0x100000, pt.size, us(50.0 * ++k)).to_seconds() * 1e9;
        const double err = ns / pt.median_ns - 1.0;
        std::printf("   %8u %12.1f %12.1f %+8.1f%%  %s\n", pt.size, ns, pt.median_ns, err * 100, verdict(err, 0.03));
    }

    // ---- 2. Goodput against the analytical TLP model ----
    std::printf(
        "\n2. DMA goodput, back-to-back 4 KiB transfers (2000 of them), MRRS 512, 64-bit addresses, 256 tags\n");
    std::printf("   reference: the analytical TLP model of pcie-bench (model/mem_bw.py): TLP bandwidth after ACK/\n");
    std::printf("   UpdateFC DLLPs at the spec's rates and SKP, 24-byte MWr/MRd and 20-byte CplD overheads\n");
    std::printf("   %-10s %5s %11s %11s %7s %11s %11s %7s\n", "link", "MPS", "wr model", "wr ref", "dev %", "rd model",
                "rd ref", "dev %");
    std::printf("   %-10s %5s %11s %11s %7s %11s %11s %7s   (Gb/s; tolerance 2%%)\n", "", "", "", "", "", "", "", "");
    for (goodput_case& c : goodput) {
        const pcie_params& p = static_cast<pcie_endpoint&>(*c.r->bus).params();
        const double wr = c.r->stream(false, 0x100000, 4096, 2000, us(10));
        const double rd = c.r->stream(true, 0x100000, 4096, 2000, us(100000));
        const double wr_ref = model_write_goodput(p, 4096), rd_ref = model_read_goodput(p, 4096);
        const double ew = wr / wr_ref - 1.0, er = rd / rd_ref - 1.0;
        const char* vw = verdict(ew, 0.02);
        const char* vr = verdict(er, 0.02);
        std::printf("   Gen%d x%-4d %5u %11.2f %11.2f %+6.2f%% %11.2f %11.2f %+6.2f%%  %s %s\n", c.gen, c.lanes, c.mps,
                    wr * 8 / 1e9, wr_ref * 8 / 1e9, ew * 100, rd * 8 / 1e9, rd_ref * 8 / 1e9, er * 100, vw, vr);
    }
    {
        // The tag limit: 32 tags on Gen5 x16 cannot cover the round trip (Little's law).
        const pcie_params& p = static_cast<pcie_endpoint&>(*tag_rig.bus).params();
        const double bw = tlp_bandwidth(p);
        const double rtt = (p.tlp_overhead(true) / bw) + p.completion_latency.to_seconds() +
                           calibration_memory().latency.to_seconds() +
                           p.max_read_request * 8.0 / calibration_memory().bandwidth_bps +
                           (p.max_read_request + 2.0 * p.tlp_overhead(false)) / bw;
        const double rd = tag_rig.stream(true, 0x100000, 4096, 2000, us(10));
        const double ref = model_read_goodput_tags(p, 4096, rtt);
        const double e = rd / ref - 1.0;
        std::printf(
            "   Gen5 x16   %5u  read with 32 tags: model %.2f Gb/s, Little's law %.2f Gb/s (round trip %.0f ns) "
            "%+5.2f%%  %s\n",
            p.max_payload, rd * 8 / 1e9, ref * 8 / 1e9, rtt * 1e9, e * 100, verdict(e, 0.02));
    }

    // ---- 3. PCI-X 133 ----
    std::printf("\n3. PCI-X 133 (64-bit, 133.33 MHz, shared, half duplex), sustained DMA bandwidth\n");
    std::printf("   reference: peak %.1f MB/s (PCI-X Addendum 1.0); quoted sustained ~%.0f%% of peak = %.0f MB/s\n",
                kPcixPeakMBps, kPcixQuotedEfficiency * 100, kPcixPeakMBps * kPcixQuotedEfficiency);
    std::printf("   %-34s %9s %8s %12s %12s\n", "transfers (2000 each)", "MB/s", "% peak", "clocks/txn", "txns/MB");
    for (pcix_case& c : pcix) {
        double mbps = 0;
        const pcix_bridge& b = static_cast<pcix_bridge&>(*c.r->bus);
        if (c.mixed) {
            // Alternating reads and writes, all ready at once: a NIC sending and receiving.
            sc_core::sc_time last = us(10);
            for (int i = 0; i < 2000; ++i) {
                last = std::max(last, us(10) + c.r->transfer(i % 2 == 0, 0x100000 + (i % 64) * 4096u, c.size, us(10)));
            }
            mbps = 2000.0 * c.size / (last - us(10)).to_seconds() / 1e6;
        } else {
            mbps = c.r->stream(c.read, 0x100000, c.size, 2000, us(10)) / 1e6;
        }
        c.mbps = mbps;
        const auto& n = b.counts();
        std::printf("   %-34s %9.1f %7.1f%% %12.1f %12.1f\n", c.what, mbps, 100 * mbps / kPcixPeakMBps,
                    static_cast<double>(n.clocks) / static_cast<double>(n.transactions()),
                    static_cast<double>(n.transactions()) / (2000.0 * c.size / 1e6));
    }
    {
        // Checks: nothing above peak; long bursts near peak; the defaults near the quoted figure.
        const double big_write = pcix[3].mbps, mixed = pcix[2].mbps;
        const double e = mixed / (kPcixPeakMBps * kPcixQuotedEfficiency) - 1.0;
        std::printf(
            "   4 KiB write bursts: %.1f MB/s = %.1f%% of peak (at most peak, at least 95%%: %s)\n", big_write,
            100 * big_write / kPcixPeakMBps,
            big_write <= kPcixPeakMBps * 1.0001 && big_write >= 0.95 * kPcixPeakMBps ? "ok" : (++failures, "OUT"));
        std::printf(
            "   defaults (MMRBC 512, 512 B bursts), reads and writes: %.1f MB/s vs quoted %.0f MB/s: %+.1f%%  %s "
            "(tolerance 5%%)\n",
            mixed, kPcixPeakMBps * kPcixQuotedEfficiency, e * 100, verdict(e, 0.05));
    }

    // ---- 4. Markers: DMA that skips them versus one that fragments at them (seed 001 §6) ----
    std::printf("\n4. Receive placement of 2000 DDP segments of 1448 bytes with MPA markers every 512 bytes\n");
    std::printf("   %-24s %-9s %10s %12s %12s %10s\n", "bus", "DMA", "transfers", "bus pkts/MB", "MB/s", "frag/seg");
    const auto layout = marker_layout(2000, 1448);
    for (rig* r : {&m_skip_pcie, &m_frag_pcie, &m_skip_pcix, &m_frag_pcix}) {
        std::vector<std::uint8_t> buf(1448, 0x5a);
        sc_core::sc_time last = us(10);
        for (std::size_t i = 0; i < layout.size(); ++i) {
            dma_ext ext;
            ext.marker_breaks = layout[i].second;
            tlm::tlm_generic_payload gp;
            gp.set_command(tlm::TLM_WRITE_COMMAND);
            gp.set_address(0x100000 + (i % 512) * 2048);
            gp.set_data_ptr(buf.data());
            gp.set_data_length(1448);
            gp.set_streaming_width(1448);
            gp.set_byte_enable_ptr(nullptr);
            gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
            gp.set_extension(&ext);
            sc_core::sc_time d = us(10);
            r->dev.out->b_transport(gp, d);
            gp.clear_extension(&ext);
            last = std::max(last, d);
        }
        const dma_engine::channel_stats t = r->dma->totals();
        const double mb = 2000.0 * 1448 / 1e6;
        std::printf("   %-24s %-9s %10llu %12.1f %12.1f %10.2f\n",
                    r->bus->kind() == std::string("pcie") ? "PCIe Gen3 x8 MPS 256" : "PCI-X 133 64-bit",
                    r->dma->params().markers == dma_marker_mode::fragment ? "fragment" : "skip",
                    static_cast<unsigned long long>(t.bus_transfers), static_cast<double>(t.bus_packets) / mb,
                    mb / (last - us(10)).to_seconds(), static_cast<double>(t.marker_fragments) / 2000.0);
    }

    std::printf("\n%s: %d figure%s outside tolerance\n", failures == 0 ? "calibration ok" : "CALIBRATION FAILED",
                failures, failures == 1 ? "" : "s");
    return failures == 0 ? 0 : 1;
}
