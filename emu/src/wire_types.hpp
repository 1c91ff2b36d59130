// Element type ids between processes (a backend whose ranks are processes).
// Each process numbers types in the order its nodes first use them
// (node.hpp), so two ranks may give one type different ids: the wire carries
// a hash of the type's mangled name and size instead. Private to emu/src.
#pragma once

#include <cstdint>

namespace hcube::detail {

// The hash of type `id`, as the same type has in every process of the job.
std::uint64_t wire_type_hash(std::uint32_t id);
// This process's id of the type whose hash is `hash`; a type no node here
// has used yet gets its id now, and keeps it when one does.
std::uint32_t wire_type_of_hash(std::uint64_t hash);

} // namespace hcube::detail
