// What the collectives accept as buffers and operators. Like the node
// primitives (wire_range, node.hpp) and mpl's collectives, every collective
// takes any contiguous sized range: std::span<T>, std::span<const T>,
// std::vector<T>, std::array<T, N>, T[N]. The element type is deduced from the
// ranges; code written for the span-only signatures may still name it,
// allgather<int>(me, a, b), which then only checks that the ranges hold int.
//
//   std::vector<int> mine(m), all(p * m);
//   hcube::allgather(me, mine, all);                       // deduced: int
//   hcube::broadcast(me, std::span(all).first(m), 0);      // a view is an output too
#pragma once

#include <concepts>
#include <cstddef>
#include <functional>
#include <ranges>
#include <span>
#include <type_traits>

#include <hcube/node.hpp>

namespace hcube {

// The default first template argument of every collective: "deduce the element
// type from the ranges".
struct deduce_element {};

namespace detail {
template <class T, class R>
struct element_of {
    using type = T;
};
template <class R>
struct element_of<deduce_element, R> {
    using type = std::ranges::range_value_t<R>;
};
} // namespace detail

// The element type of range R, or T when the caller named one.
template <class T, class R>
using element_t = typename detail::element_of<T, R>::type;

// A range a collective reads: contiguous, sized, of trivially copyable
// elements (of type T when T is named).
template <class R, class T = deduce_element>
concept input_buffer = wire_range<R> &&
    (std::same_as<T, deduce_element> || std::same_as<std::ranges::range_value_t<R>, T>);

// A range a collective writes: an input_buffer whose elements are not const,
// passed as an lvalue (a container) or as a view that refers to one (span,
// subrange). A temporary container is refused: its results would be lost.
template <class R, class T = deduce_element>
concept output_buffer =
    input_buffer<R, T> &&
    !std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<R>>> &&
    (std::is_lvalue_reference_v<R> || std::ranges::borrowed_range<R>);

// An associative operator on T: op(a, b) is a T (or converts to one). Whether it
// also commutes is is_commutative (reduce_scatter.hpp).
template <class Op, class T>
concept reduction_op = std::invocable<Op&, const T&, const T&> &&
    std::convertible_to<std::invoke_result_t<Op&, const T&, const T&>, T>;

// The spans a collective works on.
template <class T, class R>
std::span<const element_t<T, R>> input_span(const R& r) {
    return {std::ranges::data(r), std::ranges::size(r)};
}
template <class T, class R>
std::span<element_t<T, R>> output_span(R&& r) {
    return {std::ranges::data(r), std::ranges::size(r)};
}

} // namespace hcube
