// A machine: 2^dim node threads, created once and reused by every run().
#pragma once

#include <functional>
#include <memory>

#include <hcube/config.hpp>
#include <hcube/error.hpp>
#include <hcube/node.hpp>
#include <hcube/report.hpp>

namespace hcube {

class machine {
public:
    // Throws usage_error for a dimension outside 0..max_dim or a bad cost model.
    explicit machine(config cfg);
    ~machine();
    machine(const machine&) = delete;
    machine& operator=(const machine&) = delete;

    // Runs `program` on every node (SPMD) and returns what it measured.
    // If a node program throws, the run is cancelled and run_error is thrown;
    // a deadlock throws deadlock_error. The machine stays usable either way.
    run_report run(const std::function<void(node&)>& program);

    const config& cfg() const noexcept;
    int size() const noexcept { return 1 << cfg().dim; }

    // Between runs: change the cost model, port model or tracing.
    void set_cost(cost_model c);
    void set_ports(port_model p);
    void set_trace(bool on);

private:
    std::unique_ptr<detail::machine_state> state_;
};

} // namespace hcube
