// Scenario keys of the links: the fault keys every direction of a link has (link.a_to_b and
// link.b_to_a, a fabric host's own link, the leaf-spine uplinks), a host's own link in a fabric
// (hosts.<i>.link, each key inheriting its link.* counterpart while unset), and the checks on them
// (docs/architecture.md, "Fabric").
#include <boost/json.hpp>

#include "config/units.h"
#include "schema_parts.h"

namespace rnic::platform {

using namespace config::literals;

std::string first_key_set(const boost::json::value& v, const std::string& path) {
    if (!v.is_object()) return v.is_null() ? "" : path;
    for (const auto& kv : v.get_object()) {
        const std::string key = first_key_set(kv.value(), path + "." + std::string(kv.key()));
        if (!key.empty()) return key;
    }
    return "";
}

void declare_faults(config::node& f, const std::string& inherit) {
    // Each leaf inherits the leaf of the same name under `inherit`, if given.
    auto from = [&inherit](config::node& leaf, const std::string& name) {
        if (!inherit.empty()) leaf.inherits(inherit + "." + name);
    };
    from(f.number("loss", 0, "Probability that a frame is lost", 0, 1), "loss");
    auto& ge = f.object("burst", "Gilbert-Elliott bursty loss (two states, per-frame transitions)");
    from(ge.number("good_to_bad", 0, "Probability of moving to the bad state (0 disables the model)", 0, 1),
         "burst.good_to_bad");
    from(ge.number("bad_to_good", 1, "Probability of leaving the bad state", 0, 1), "burst.bad_to_good");
    from(ge.number("loss_good", 0, "Loss probability in the good state", 0, 1), "burst.loss_good");
    from(ge.number("loss_bad", 1, "Loss probability in the bad state", 0, 1), "burst.loss_bad");
    from(
        f.string("loss_trace", "", "File of frame numbers (1-based, one per line) to drop, e.g. traces/loss-burst.txt"),
        "loss_trace");
    from(f.number("reorder", 0, "Probability that a frame is held back (and so overtaken)", 0, 1), "reorder");
    from(f.time("reorder_delay", "5us", "How long a held-back frame is delayed", 0, 1_s), "reorder_delay");
    from(f.number("duplicate", 0, "Probability that a frame arrives twice", 0, 1), "duplicate");
    from(f.number("corrupt", 0, "Probability that one bit of a frame flips", 0, 1), "corrupt");
    from(f.boolean("corrupt_fixes_checksum", false,
                   "The corrupting middlebox rewrites the TCP/IP checksums, leaving the damage to the MPA CRC"),
         "corrupt_fixes_checksum");
    from(f.number("resegment", 0, "Probability that a middlebox splits a TCP data segment at a random byte", 0, 1),
         "resegment");
}

void declare_host_link(config::node& host) {
    auto& link = host.object("link",
                             "star and leaf_spine: this host's own link to its switch; a key left unset (null) takes "
                             "its link.* value, as hosts beyond the array do");
    link.rate("rate", "100Gbps", "Line rate of this host's link and of the switch port facing it", 1e6, 1.6e12)
        .inherits("link.rate");
    link.time("propagation", "10ns", "One-way propagation delay of this host's link", 0, 1_s)
        .inherits("link.propagation");
    declare_faults(link.object("to_switch", "Faults on frames from this host to its switch (unset: link.a_to_b.*)"),
                   "link.a_to_b");
    declare_faults(link.object("from_switch", "Faults on frames from the switch to this host (unset: link.b_to_a.*)"),
                   "link.b_to_a");
}

std::string host_link_key_set(const config::scenario& s, std::size_t host) {
    const std::string at = "hosts." + std::to_string(host) + ".link";
    return first_key_set(s.get_json(at), at);
}

std::string check_host_links(const config::scenario& s) {
    if (s.get_string("topology.kind") != "back_to_back") return "";
    for (std::size_t i = 0; i < s.array_size("hosts"); ++i) {
        const std::string key = host_link_key_set(s, i);
        if (!key.empty()) {
            // One cable has one rate and no switch: what a host's own link would mean there is
            // link.* already, so a per-host key is refused rather than half applied.
            return key +
                   ": per-host link keys apply to a star or leaf_spine, where every host has its own link; "
                   "back_to_back's one link takes link.* (link.a_to_b from host a, link.b_to_a from host b)";
        }
    }
    return "";
}

}  // namespace rnic::platform
