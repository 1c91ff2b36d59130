// The usage errors of the node primitives: every one names the node first.
// Private to emu/src.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace hcube::detail {

// usage_error("node <id>: <what>").
[[noreturn]] void fail(int id, const std::string& what);

// The failures of a primitive's fast path, out of line: a message built in
// the primitive's own frame spread that frame (and the stack lines a parked
// fiber keeps) over more cache lines.
[[noreturn, gnu::cold, gnu::noinline]] void bad_dim(int id, int dim, int k, const char* op);
[[noreturn, gnu::cold, gnu::noinline]] void too_large(int id, std::size_t bytes);
[[noreturn, gnu::cold, gnu::noinline]] void out_of_memory(int id, std::size_t bytes);

// "3 elements of 8 bytes".
std::string elements(std::size_t bytes, std::size_t elem);
// "message was sent as double (8-byte elements), received as ...".
std::string type_mismatch(std::uint32_t sent, std::uint32_t received);

} // namespace hcube::detail
