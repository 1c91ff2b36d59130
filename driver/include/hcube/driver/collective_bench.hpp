// `hcube bench collective OP`: wall time per call of catalog algorithms over
// message sizes, next to the time the calibrated cost model predicts (virtual
// time with this machine's t_s and t_w), and, over all of an operation's
// algorithms, which one `auto --cost calibrated` chose and which measured
// fastest at each size.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <hcube/driver/catalog.hpp>
#include <hcube/driver/microbench.hpp>

namespace hcube::microbench {

struct collective_setup {
    // op, algo (a name, or "all": every algorithm that fits), dim, ports,
    // type, links, executor; cost is replaced by the calibrated model.
    run_params params;
    std::vector<std::size_t> words; // the catalog's m
    long iterations = 0;            // calls per sample; 0: as many as fill seconds
    double seconds = 0.1;
    int samples = 5;
    std::string calibration_file; // empty: calibration::default_path()
};

// One algorithm at one size: seconds per call and the model's prediction.
struct collective_row {
    std::string algo;
    std::size_t words = 0;
    spread seconds;
    double predicted = 0; // virtual time under the calibrated model
    long calls = 0;       // per sample
    bool chosen = false;  // auto --cost calibrated's choice at this size
    bool fastest = false; // the least median among the measured at this size
};

struct collective_table {
    config machine; // as resolved, with the calibrated cost
    std::string method;
    std::vector<collective_row> rows;
    // Sizes where the chosen algorithm was measured and measured fastest,
    // over sizes with at least two algorithms measured (NaN when none).
    double agreement = 0;
    int compared_sizes = 0;
    // With algo "all": an algorithm left out at a size because it runs
    // another's plan there (algorithm_entry::same_plan_as), e.g. "m = 1:
    // gray-bidirectional runs gray's plan here; timed once, as gray".
    std::vector<std::string> notes;
};

// Throws usage_error for an unknown op or algo, no sizes, an algorithm that
// does not fit (when named), no calibration, or data beyond
// max_buffer_bytes; error when a run does not verify.
collective_table run_collective(const collective_setup& s);

// `hcube calibrate`'s table for auto --cost calibrated: every algorithm of
// each operation at each dimension and size (s.params.op, dim and words are
// replaced), the least median the fastest. A point where fewer than two
// algorithms fit is not recorded (auto has no choice there); one that cannot
// run here (its data beyond max_buffer_bytes, a dimension beyond the
// executor's) is skipped and named. `measured` sees each point as it is done.
struct survey {
    measured_table fastest;
    std::vector<std::string> skipped;
};
survey survey_fastest(collective_setup s, const std::vector<std::string>& ops,
                      const std::vector<int>& dims,
                      const std::function<void(const measured_fastest&)>& measured = {});

} // namespace hcube::microbench
