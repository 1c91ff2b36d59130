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

// One node program that threw during a run.
struct node_failure {
    int node = -1;
    std::string what;            // its exception's what(), or a description
    std::exception_ptr original; // the exception itself, for std::rethrow_exception
};

// A run that did not complete: one or more node programs threw (the other
// nodes were cancelled and are not listed). The message names the failed nodes
// in node order, the first few with their messages, so it is the same in every
// run of the same program.
class run_error : public error {
public:
    // `failures`: at least one, in node order.
    explicit run_error(std::vector<node_failure> failures);
    // The lowest failing node and its exception.
    int node() const noexcept { return failures_.front().node; }
    std::exception_ptr original() const noexcept { return failures_.front().original; }
    // Every node that threw, in node order.
    const std::vector<node_failure>& failures() const noexcept { return failures_; }

private:
    std::vector<node_failure> failures_;
};

// What one blocked node waited for when a deadlock was declared.
struct blocked_wait {
    int node = -1;
    // e.g. "recv on dim 2 from node 4, expecting 8 bytes; 1 message pending on
    // dim 0 from node 1, 16 bytes": the wait, then what it left unread.
    std::string what;
    int dim = -1;  // the link it waits on (-1: any link, or routed)
    int peer = -1; // the node it waits for (-1: any)
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
