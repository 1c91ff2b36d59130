// write_chrome_trace on the virtual axis: a send's slice is its message's
// time on the sender's port, every flow goes forward in time from the send to
// the end of the receive, and the slices of one track never overlap.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <hcube/draw.hpp>
#include <hcube/hcube.hpp>

#include "traced_runs.hpp"

using namespace hcube;
using json = nlohmann::json;
using test::traced_broadcast;
using test::traced_routed_broadcast;

namespace {

// The trace's checks, for any run; returns the send slices' virtual starts of
// node 0 in call order.
std::vector<double> check_trace(const run_report& r) {
    std::ostringstream os;
    write_chrome_trace(r, os);
    const json doc = json::parse(os.str());
    std::vector<json> slices, starts(r.trace.size()), ends(r.trace.size());
    for (const auto& e : doc["traceEvents"]) {
        if (e["ph"] == "X") slices.push_back(e);
        if (e["ph"] == "s") starts[e["id"].get<std::size_t>()] = e;
        if (e["ph"] == "f") ends[e["id"].get<std::size_t>()] = e;
    }
    REQUIRE(slices.size() == r.calls.size()); // in call order
    const auto ts = [](const json& e) { return e["ts"].get<double>(); };
    const auto end = [&](const json& e) { return ts(e) + e["dur"].get<double>(); };
    // 1 virtual time unit is 1 ms.
    for (std::size_t i = 0; i < r.trace.size(); ++i) {
        const trace_record& m = r.trace[i];
        CAPTURE(i);
        const json& send = slices[std::size_t(m.send_call)];
        const json& recv = slices[std::size_t(m.recv_call)];
        CHECK(send["args"]["virtual_start"].get<double>() == doctest::Approx(m.start));
        CHECK(recv["args"]["virtual_end"].get<double>() >= m.arrival - 1e-9);
        CHECK(ts(send) == doctest::Approx(1000 * m.start));
        // The flow: from the send's slice, forward, into the receive's slice.
        CHECK(starts[i]["tid"] == send["tid"]);
        CHECK(ends[i]["tid"] == recv["tid"]);
        CHECK(ts(ends[i]) > ts(starts[i]));
        CHECK(ts(starts[i]) >= ts(send));
        CHECK(ts(starts[i]) <= end(send));
        CHECK(ts(ends[i]) >= ts(recv));
        CHECK(ts(ends[i]) <= end(recv));
        CHECK(ts(ends[i]) >= 1000 * m.arrival - 1);
    }
    std::map<int, std::vector<std::pair<double, double>>> tracks;
    for (const json& s : slices)
        tracks[s["tid"].get<int>()].emplace_back(ts(s), end(s));
    for (auto& [tid, v] : tracks) {
        std::sort(v.begin(), v.end());
        for (std::size_t k = 1; k < v.size(); ++k)
            CHECK(v[k].first >= v[k - 1].second - 1e-9);
    }
    std::vector<double> root;
    for (std::size_t c = 0; c < r.calls.size(); ++c)
        if (r.calls[c].node == 0 &&
            (r.calls[c].kind == call_kind::send || r.calls[c].kind == call_kind::send_routed))
            root.push_back(slices[c]["args"]["virtual_start"].get<double>());
    return root;
}

} // namespace

TEST_CASE("trace of a binomial broadcast: the root's sends at 0, 1, 2, every flow forward") {
    const run_report r = traced_broadcast(port_model::single_port);
    REQUIRE(r.trace.size() == 7);
    CHECK(check_trace(r) == std::vector<double>{0, 1, 2});
    // With t_w: each send holds the port for t_s + 4 t_w.
    CHECK(check_trace(traced_broadcast(port_model::single_port, {.t_s = 1, .t_w = 0.5})) ==
          std::vector<double>{0, 3, 6});
}

TEST_CASE("trace of all-port sends at once: overlapping calls go to a track beside the node") {
    const run_report r = traced_broadcast(port_model::all_port);
    CHECK(check_trace(r) == std::vector<double>{0, 0, 0});
    std::ostringstream os;
    write_chrome_trace(r, os);
    CHECK(os.str().find("node 0 (overlapping calls)") != std::string::npos);
}

TEST_CASE("trace of routed messages: every flow forward, sends on the root's port") {
    // The root's port sends one routed message after another.
    CHECK(check_trace(traced_routed_broadcast()) == std::vector<double>{0, 1, 2, 3, 4, 5, 6});
}
