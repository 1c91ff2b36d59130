// The test harness's per-test-case deadline (tests/main.cpp): a case that
// runs on purpose for longer than the default (a time budget) says so.
#pragma once

namespace hcube::test {

// The running test case may run `seconds` more from now before it counts
// as hung.
void extend_deadline(double seconds);

} // namespace hcube::test
