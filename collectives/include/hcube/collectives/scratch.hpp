// The collectives' working buffers: what a node holds besides its input and
// output (blocks in transit, partial sums, partners). hcube draw watches them
// to draw what every node holds after each step; a program may do the same
// for an element type of its own by specializing scratch_watch<T>:
//
//   template <> struct hcube::scratch_watch<my_elem> : std::true_type {
//       static void allocated(int node, my_elem* p, std::size_t n);
//       static void freed(int node, my_elem* p, std::size_t n) noexcept;
//   };
//
// Both run on the node's own context (thread or fiber) while it runs its
// program. For every type not watched, scratch<T> is std::vector<T> and
// scratch_of(me, n) a std::vector<T>(n): the hook costs nothing.
#pragma once

#include <cstddef>
#include <memory>
#include <type_traits>
#include <vector>

#include <hcube/node.hpp>

namespace hcube {

template <class T>
struct scratch_watch : std::false_type {};

// A watched type's allocator: it names the node whose buffer it allocates.
template <class T>
struct scratch_allocator {
    using value_type = T;
    using propagate_on_container_move_assignment = std::true_type;
    using propagate_on_container_swap = std::true_type;
    int node = -1;

    scratch_allocator() = default;
    explicit scratch_allocator(int owner) noexcept
        : node(owner) {}
    template <class U>
    scratch_allocator(const scratch_allocator<U>& o) noexcept
        : node(o.node) {}

    T* allocate(std::size_t n) {
        T* p = std::allocator<T>{}.allocate(n);
        scratch_watch<T>::allocated(node, p, n);
        return p;
    }
    void deallocate(T* p, std::size_t n) noexcept {
        scratch_watch<T>::freed(node, p, n);
        std::allocator<T>{}.deallocate(p, n);
    }
    friend bool operator==(const scratch_allocator& a, const scratch_allocator& b) noexcept {
        return a.node == b.node;
    }
};

template <class T>
using scratch = std::conditional_t<scratch_watch<T>::value, std::vector<T, scratch_allocator<T>>,
                                   std::vector<T>>;

// A working buffer of node me with n value-initialized elements.
template <class T>
scratch<T> scratch_of(const node& me, std::size_t n = 0) {
    if constexpr (scratch_watch<T>::value)
        return scratch<T>(n, scratch_allocator<T>(me.id()));
    else
        return scratch<T>(n);
}

// One holding a copy of [first, last).
template <class T, class It>
scratch<T> scratch_of(const node& me, It first, It last) {
    scratch<T> v = scratch_of<T>(me);
    v.assign(first, last);
    return v;
}

} // namespace hcube
