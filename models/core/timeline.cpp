#include "core/timeline.h"

#include <cstdio>
#include <map>
#include <memory>

namespace rnic::timeline {

namespace {

// Microseconds with six decimals from picoseconds, exactly (no floating point).
std::string us_text(std::uint64_t ps) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%llu.%06llu", static_cast<unsigned long long>(ps / 1000000u),
                  static_cast<unsigned long long>(ps % 1000000u));
    return buf;
}

}  // namespace

namespace detail {
bool recording = false;  // the_writer().on(), for the inline enabled()
}  // namespace detail

namespace {

class writer {
public:
    ~writer() { finish(); }

    bool start(const std::string& path, std::string* error) {
        finish();
        file_ = std::fopen(path.c_str(), "w");
        if (file_ == nullptr) {
            if (error != nullptr) *error = "cannot open timeline file '" + path + "' for writing";
            return false;
        }
        written = dropped = 0;
        first_ = true;
        processes_.clear();
        threads_.clear();
        std::fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", file_);
        detail::recording = true;
        return true;
    }

    void finish() {
        if (file_ == nullptr) return;
        std::fprintf(file_,
                     "\n],\"otherData\":{\"generator\":\"rnic-vp\",\"time_unit_of_ts\":\"us\","
                     "\"events_written\":%llu,\"events_dropped\":%llu}}\n",
                     static_cast<unsigned long long>(written), static_cast<unsigned long long>(dropped));
        std::fclose(file_);
        file_ = nullptr;
        detail::recording = false;
    }

    bool on() const { return file_ != nullptr; }

    void event(char ph, const std::string& track, const std::string& name, std::uint64_t start_ps, std::uint64_t dur_ps,
               const args& a, const char* cat) {
        if (file_ == nullptr) return;
        if (written >= max_events) {
            ++dropped;
            return;
        }
        const auto [pid, tid] = ids(track);
        std::string line = "{\"ph\":\"";
        line += ph;
        line += "\",\"cat\":\"" + escape(cat) + "\",\"name\":\"" + escape(name) + "\",\"pid\":" + std::to_string(pid) +
                ",\"tid\":" + std::to_string(tid) + ",\"ts\":" + us_text(start_ps);
        if (ph == 'X') line += ",\"dur\":" + us_text(dur_ps);
        if (ph == 'i') line += ",\"s\":\"t\"";
        line += ",\"args\":" + a.json() + "}";
        emit(line);
        ++written;
    }

    std::uint64_t max_events = 2000000;
    std::uint64_t written = 0, dropped = 0;

private:
    void emit(const std::string& line) {
        if (!first_) std::fputs(",\n", file_);
        first_ = false;
        std::fputs(line.c_str(), file_);
    }

    // Process and thread ids, announced with metadata events the first time a track appears.
    std::pair<int, int> ids(const std::string& track) {
        const std::size_t slash = track.find('/');
        const std::string process = slash == std::string::npos ? std::string("rnic-vp") : track.substr(0, slash);
        const std::string thread = slash == std::string::npos ? track : track.substr(slash + 1);
        auto p = processes_.find(process);
        if (p == processes_.end()) {
            p = processes_.emplace(process, static_cast<int>(processes_.size()) + 1).first;
            emit("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + std::to_string(p->second) +
                 ",\"tid\":0,\"args\":{\"name\":\"" + escape(process) + "\"}}");
        }
        const std::string key = process + "/" + thread;
        auto t = threads_.find(key);
        if (t == threads_.end()) {
            t = threads_.emplace(key, static_cast<int>(threads_.size()) + 1).first;
            emit("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + std::to_string(p->second) +
                 ",\"tid\":" + std::to_string(t->second) + ",\"args\":{\"name\":\"" + escape(thread) + "\"}}");
        }
        return {p->second, t->second};
    }

    std::FILE* file_ = nullptr;
    bool first_ = true;
    std::map<std::string, int> processes_;
    std::map<std::string, int> threads_;
};

writer& the_writer() {
    static writer w;  // closed (and the JSON finished) at exit
    return w;
}

}  // namespace

std::string escape(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (const char c : s) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\t':
            out += "\\t";
            break;
        case '\r':
            out += "\\r";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
                out += buf;
            } else {
                out += c;
            }
        }
    }
    return out;
}

args& args::add_unsigned(const char* key, unsigned long long value) {
    items_.emplace_back(key, std::to_string(value));
    json_.clear();
    return *this;
}
args& args::add_signed(const char* key, long long value) {
    items_.emplace_back(key, std::to_string(value));
    json_.clear();
    return *this;
}
args& args::add(const char* key, double value) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.6g", value);
    items_.emplace_back(key, buf);
    json_.clear();
    return *this;
}
args& args::add(const char* key, const std::string& value) {
    items_.emplace_back(key, "\"" + escape(value) + "\"");
    json_.clear();
    return *this;
}
const std::string& args::json() const {
    if (json_.empty()) {
        json_ = "{";
        for (std::size_t i = 0; i < items_.size(); ++i) {
            if (i > 0) json_ += ",";
            json_ += "\"" + escape(items_[i].first) + "\":" + items_[i].second;
        }
        json_ += "}";
    }
    return json_;
}

bool open(const std::string& path, std::string* error) {
    return the_writer().start(path, error);
}
void close() {
    the_writer().finish();
}
void set_max_events(std::uint64_t n) {
    the_writer().max_events = n;
}
std::uint64_t events_written() {
    return the_writer().written;
}
std::uint64_t events_dropped() {
    return the_writer().dropped;
}

void complete_event(const std::string& track, const std::string& name, std::uint64_t start_ps, std::uint64_t dur_ps,
                    const args& a, const char* cat) {
    the_writer().event('X', track, name, start_ps, dur_ps, a, cat);
}

void instant_event(const std::string& track, const std::string& name, std::uint64_t at_ps, const args& a,
                   const char* cat) {
    the_writer().event('i', track, name, at_ps, 0, a, cat);
}

}  // namespace rnic::timeline
