// The working buffers of symbolic elements the collectives allocate
// (scratch_of), by node: what a node holds beyond its in and out.
#include <algorithm>
#include <iterator>
#include <map>
#include <mutex>
#include <span>
#include <utility>

#include "symbols.hpp"

namespace hcube::draw_detail {

namespace {

// Every working buffer of symbolic elements the collectives allocate
// (scratch.hpp), by the node it belongs to. Blocks a node holds for others
// wait there (scatter's subtree run, ASPC's transit), which the node's in and
// out never show.
// With keep_freed, a buffer's elements outlive it until the node's next
// snapshot (descend's partners arrive, are used and freed between two calls).
struct sym_buffers {
    std::mutex lock;
    std::map<const sym*, std::pair<std::size_t, int>> live; // start -> count, node
    std::map<int, std::vector<sym>> freed;                  // node -> elements
    bool keep_freed = false;
};
sym_buffers& buffers() {
    static sym_buffers b;
    return b;
}

} // namespace

std::vector<sym> memory_of(int i, std::initializer_list<const std::vector<sym>*> also) {
    std::vector<sym> v;
    for (const auto* b : also)
        v.insert(v.end(), b->begin(), b->end());
    // Only node i frees its buffers, and this runs on node i's context: they
    // can be read unlocked.
    std::vector<std::span<const sym>> mine;
    {
        auto& b = buffers();
        const std::lock_guard g(b.lock);
        for (const auto& [p, at] : b.live)
            if (at.second == i) mine.emplace_back(p, at.first);
        auto& gone = b.freed[i];
        v.insert(v.end(), gone.begin(), gone.end());
        gone.clear();
    }
    for (const auto b : mine)
        v.insert(v.end(), b.begin(), b.end());
    std::erase_if(v, [](const sym& s) { return !s.mask; });
    std::sort(v.begin(), v.end(), sym_less);
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
}

void keep_freed_buffers(bool keep) {
    buffers().keep_freed = keep;
}

std::vector<sym> minus(const std::vector<sym>& a, const std::vector<sym>& b) {
    std::vector<sym> out;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out), sym_less);
    return out;
}
std::vector<sym> common(const std::vector<sym>& a, const std::vector<sym>& b) {
    std::vector<sym> out;
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out),
                          sym_less);
    return out;
}

} // namespace hcube::draw_detail

namespace hcube {

void scratch_watch<draw_detail::sym>::allocated(int node, draw_detail::sym* p, std::size_t n) {
    std::fill_n(p, n, draw_detail::sym{});
    auto& b = draw_detail::buffers();
    const std::lock_guard g(b.lock);
    b.live[p] = {n, node};
}
void scratch_watch<draw_detail::sym>::freed(int node, draw_detail::sym* p, std::size_t n) noexcept {
    auto& b = draw_detail::buffers();
    const std::lock_guard g(b.lock);
    b.live.erase(p);
    if (b.keep_freed)
        std::copy_if(p, p + n, std::back_inserter(b.freed[node]),
                     [](const draw_detail::sym& s) { return s.mask != 0; });
}

} // namespace hcube
