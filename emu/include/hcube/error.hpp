// Errors hcube throws. Every message names the node and the values involved.
#pragma once

#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

namespace hcube {

// Base of everything hcube throws on purpose.
class error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A bad argument given to a machine or to a node primitive.
class usage_error : public error {
public:
    using error::error;
};

// A run that did not complete: a node program threw (the first such node is
// reported; the others were cancelled).
class run_error : public error {
public:
    run_error(int node, const std::string& what, std::exception_ptr original);
    int node() const noexcept { return node_; }
    // The exception the node program threw, for std::rethrow_exception.
    std::exception_ptr original() const noexcept { return original_; }

private:
    int node_;
    std::exception_ptr original_;
};

// What one blocked node waited for when a deadlock was declared.
struct blocked_wait {
    int node = -1;
    std::string what; // e.g. "recv on dim 0 from node 1, expecting 8 bytes"
};

// Every unfinished node was blocked with nothing in flight that could wake it.
class deadlock_error : public error {
public:
    explicit deadlock_error(std::vector<blocked_wait> waits);
    const std::vector<blocked_wait>& waits() const noexcept { return waits_; }

private:
    std::vector<blocked_wait> waits_;
};

} // namespace hcube
