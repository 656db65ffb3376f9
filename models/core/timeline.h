// Transaction timeline: a Chrome trace-event JSON file (https://docs.google.com/document/d/
// 1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU, "JSON Object Format") that Perfetto
// (ui.perfetto.dev) and chrome://tracing open. Off unless a run opens it; every call is then a cheap
// test of one flag. Events are "complete" events (ph "X"): a track, a name, a start and a duration in
// simulated time, and a few arguments. A track is "process/thread", e.g. "a.pcie/upstream": the
// part before the first '/' becomes the process row, the rest the thread row under it.
//
//   timeline::open("run.json");                      // rnic-sim --timeline FILE
//   timeline::complete_event("a.pcie/upstream", "MWr", start_ps, dur_ps,
//                            timeline::args().add("bytes", 256).add("addr", "0x10000"));
//   timeline::close();                                // also done at exit
//
// Output is deterministic (events in call order, times printed exactly in ps as microseconds with
// six decimals). The file stops growing at max_events (default 2,000,000 events, a few hundred MB);
// the overflow is counted and noted in the file's metadata. No SystemC dependency.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace rnic::timeline {

// Arguments shown when an event is selected; numbers or strings.
class args {
public:
    // Any integer type (signed or unsigned, of any width).
    template <typename T, typename = std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>>
    args& add(const char* key, T value) {
        if constexpr (std::is_signed_v<T>) {
            return add_signed(key, static_cast<long long>(value));
        } else {
            return add_unsigned(key, static_cast<unsigned long long>(value));
        }
    }
    args& add(const char* key, double value);
    args& add(const char* key, const std::string& value);
    args& add(const char* key, const char* value) { return add(key, std::string(value)); }
    // The JSON object text, e.g. {"bytes":256,"addr":"0x10000"}.
    const std::string& json() const;

private:
    args& add_signed(const char* key, long long value);
    args& add_unsigned(const char* key, unsigned long long value);
    mutable std::string json_;
    std::vector<std::pair<std::string, std::string>> items_;  // key, JSON value text
};

// Starts writing to `path` (truncating it). Returns false and sets *error if the file cannot be
// opened; an open timeline is closed first.
bool open(const std::string& path, std::string* error = nullptr);
// Finishes the JSON (events written so far stay valid) and stops recording.
void close();
// Whether a timeline is being written. Inline (a flag the writer keeps) because models ask it for
// every TLP and transfer, and a run without a timeline should pay no call for it.
namespace detail {
extern bool recording;
}
inline bool enabled() {
    return detail::recording;
}
void set_max_events(std::uint64_t n);
std::uint64_t events_written();
std::uint64_t events_dropped();

// One complete event. `cat` groups events for filtering (e.g. "pcie", "dma").
void complete_event(const std::string& track, const std::string& name, std::uint64_t start_ps, std::uint64_t dur_ps,
                    const args& a = args(), const char* cat = "rnic");
// One instant event (ph "i", thread scope), e.g. an interrupt or a refused DMA.
void instant_event(const std::string& track, const std::string& name, std::uint64_t at_ps, const args& a = args(),
                   const char* cat = "rnic");

// JSON string escaping (exposed for tests).
std::string escape(const std::string& s);

}  // namespace rnic::timeline
