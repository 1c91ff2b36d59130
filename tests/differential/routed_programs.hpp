// Random routed user-style programs for the differential test: node programs
// that call send_routed, recv_routed (from a named source and from
// any_source) and sendrecv_routed themselves, in rounds drawn from a seed, and
// the serial reference for what every node must receive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <hcube/node.hpp>

namespace hcube::test {

// One round: every node computes, sends its messages, then takes those meant
// for it; a barrier over the links may follow.
struct routed_round {
    enum kind_t {
        permutation, // send_routed to a random derangement, recv_routed from its inverse
        sendrecv,    // the same with sendrecv_routed
        gather_any,  // nodes send to one root, which takes them with recv_routed_any
        pairs_named, // random pairs; each receiver names the sources in a random order
        pairs_any,   // random pairs; each receiver takes them from any_source
        kinds
    } kind = permutation;
    std::vector<std::vector<int>> dests;   // node s's destinations, in send order
    std::vector<std::vector<int>> sources; // node d's named sources, in receive order
    std::vector<double> compute;           // each node's computing before it sends
    // After a round taken from any_source, so that no message of the next
    // round is taken in this one.
    bool barrier = false;
};

inline const char* name(routed_round::kind_t k) {
    static const char* const names[] = {"permutation", "sendrecv", "gather-any", "pairs-named",
                                        "pairs-any"};
    return names[k];
}

struct routed_script {
    int p = 1;
    // Words of every message from s to d (one size per pair, so a receive of
    // a named size fits whichever message of the pair comes next).
    std::vector<std::vector<std::size_t>> words;
    std::vector<routed_round> rounds;
};

// Element i of message j of round r from s to d: distinct for every element
// of a run (p <= 256, rounds < 16, j < 16, i < 4096).
inline std::uint64_t routed_value(int r, int s, int d, std::size_t j, std::size_t i) {
    return ((((std::uint64_t(r) * 256 + std::uint64_t(s)) * 256 + std::uint64_t(d)) * 16 + j) *
                4096 +
            i) +
           1;
}

inline std::vector<std::uint64_t> routed_message(const routed_script& sc, int r, int s, int d,
                                                 std::size_t j) {
    std::vector<std::uint64_t> v(sc.words[std::size_t(s)][std::size_t(d)]);
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = routed_value(r, s, d, j, i);
    return v;
}

// A random permutation of 0..p-1 that moves every node (Sattolo: one cycle).
template <class Rng>
std::vector<int> random_derangement(Rng& g, int p) {
    std::vector<int> perm(std::size_t(p), 0);
    for (int i = 0; i < p; ++i)
        perm[std::size_t(i)] = i;
    for (int i = p - 1; i > 0; --i)
        std::swap(perm[std::size_t(i)], perm[std::size_t(g() % unsigned(i))]);
    return perm;
}

// The script of a d-cube (d >= 1): 1 to 4 rounds of random kinds.
template <class Rng>
routed_script draw_routed_script(Rng& g, int d) {
    routed_script sc;
    const int p = sc.p = 1 << d;
    const auto P = std::size_t(p);
    const auto other = [&](int s) { // a node other than s
        return int((unsigned(s) + 1 + unsigned(g() % (P - 1))) % unsigned(p));
    };
    sc.words.assign(P, std::vector<std::size_t>(P));
    for (auto& row : sc.words)
        for (auto& w : row) // now and then above config::eager_limit: sendrecv_routed lends it
            w = g() % 32 == 0 ? 600 : std::vector<std::size_t>{0, 1, 2, 3, 5, 8, 13}[g() % 7];
    const int rounds = 1 + int(g() % 4);
    for (int r = 0; r < rounds; ++r) {
        routed_round rd;
        rd.kind = routed_round::kind_t(g() % routed_round::kinds);
        rd.dests.resize(P);
        rd.sources.resize(P);
        for (int s = 0; s < p; ++s)
            rd.compute.push_back(std::vector<double>{0, 0, 0, 1, 2.5, 7}[g() % 6]);
        switch (rd.kind) {
        case routed_round::permutation:
        case routed_round::sendrecv: {
            const std::vector<int> perm = random_derangement(g, p);
            for (int s = 0; s < p; ++s) {
                rd.dests[std::size_t(s)].push_back(perm[std::size_t(s)]);
                rd.sources[std::size_t(perm[std::size_t(s)])].push_back(s);
            }
            break;
        }
        case routed_round::gather_any: {
            const int root = int(g() % P);
            for (int s = 0; s < p; ++s)
                for (int j = int(g() % 3); s != root && j > 0; --j) // 0, 1 or 2 messages
                    rd.dests[std::size_t(s)].push_back(root);
            break;
        }
        case routed_round::pairs_named:
        case routed_round::pairs_any:
            for (int s = 0; s < p; ++s)
                for (int j = int(g() % 4); j > 0; --j) {
                    const int to = other(s);
                    rd.dests[std::size_t(s)].push_back(to);
                    rd.sources[std::size_t(to)].push_back(s);
                }
            for (auto& from : rd.sources) // a random order of receipt
                for (std::size_t i = from.size(); i > 1; --i)
                    std::swap(from[i - 1], from[g() % i]);
            break;
        case routed_round::kinds:
            break;
        }
        const bool any = rd.kind == routed_round::gather_any || rd.kind == routed_round::pairs_any;
        rd.barrier = any || g() % 4 == 0;
        sc.rounds.push_back(std::move(rd));
    }
    return sc;
}

inline std::string describe(const routed_script& sc) {
    std::ostringstream os;
    os << sc.rounds.size() << (sc.rounds.size() == 1 ? " round:" : " rounds:");
    for (const routed_round& rd : sc.rounds)
        os << " " << name(rd.kind) << (rd.barrier ? " + barrier" : "");
    return os.str();
}

// A message as its receiver took it.
struct taken {
    int source;
    std::vector<std::uint64_t> data;
    friend bool operator==(const taken&, const taken&) = default;
};

// Node me's part of the script; what it took goes to `log`, in order.
inline void run_routed_script(node& me, const routed_script& sc, std::vector<taken>& log) {
    const auto id = std::size_t(me.id());
    for (std::size_t r = 0; r < sc.rounds.size(); ++r) {
        const routed_round& rd = sc.rounds[r];
        const auto message = [&](std::size_t j) {
            return routed_message(sc, int(r), me.id(), rd.dests[id][j], j);
        };
        if (rd.compute[id] > 0) me.compute(rd.compute[id]);
        if (rd.kind == routed_round::sendrecv) {
            const int from = rd.sources[id][0];
            std::vector<std::uint64_t> in(sc.words[std::size_t(from)][id]);
            me.sendrecv_routed(rd.dests[id][0], message(0), from, std::span(in));
            log.push_back({from, std::move(in)});
        } else {
            for (std::size_t j = 0; j < rd.dests[id].size(); ++j)
                me.send_routed(rd.dests[id][j], message(j));
        }
        switch (rd.kind) {
        case routed_round::permutation:
        case routed_round::pairs_named:
            for (std::size_t i = 0; i < rd.sources[id].size(); ++i) {
                const int from = rd.sources[id][i];
                if ((r + i) % 2 == 0) { // both forms: a buffer of the size, and any size
                    std::vector<std::uint64_t> in(sc.words[std::size_t(from)][id]);
                    me.recv_routed(from, std::span(in));
                    log.push_back({from, std::move(in)});
                } else {
                    log.push_back({from, me.recv_routed<std::uint64_t>(from)});
                }
            }
            break;
        case routed_round::gather_any:
        case routed_round::pairs_any: {
            std::size_t mine = 0;
            for (const auto& to : rd.dests)
                for (const int x : to)
                    mine += std::size_t(x) == id;
            for (; mine > 0; --mine) {
                routed_received<std::uint64_t> m = me.recv_routed_any<std::uint64_t>();
                log.push_back({m.source, std::move(m.data)});
            }
            break;
        }
        case routed_round::sendrecv:
        case routed_round::kinds:
            break;
        }
        if (rd.barrier) {
            const std::uint64_t token[1] = {r};
            std::uint64_t back[1];
            for (int k = 0; k < me.dim(); ++k)
                me.exchange(k, std::span(token), std::span(back));
        }
    }
}

// What was wrong with node d's log, or "": from every source, the messages it
// sent to d in the order it sent them (routed messages of one pair stay in
// order), and nothing else. Which source comes first among several is the
// runtime's choice by virtual time, compared across runs instead.
inline std::string check_routed_log(const routed_script& sc, int d, const std::vector<taken>& log) {
    const auto P = std::size_t(sc.p);
    std::vector<std::vector<std::vector<std::uint64_t>>> sent(P), got(P);
    for (std::size_t r = 0; r < sc.rounds.size(); ++r)
        for (std::size_t s = 0; s < P; ++s)
            for (std::size_t j = 0; j < sc.rounds[r].dests[s].size(); ++j)
                if (sc.rounds[r].dests[s][j] == d)
                    sent[s].push_back(routed_message(sc, int(r), int(s), d, j));
    std::ostringstream os;
    for (const taken& t : log) {
        if (t.source < 0 || std::size_t(t.source) >= P) {
            os << "node " << d << " took a message from node " << t.source;
            return os.str();
        }
        got[std::size_t(t.source)].push_back(t.data);
    }
    for (std::size_t s = 0; s < P; ++s) {
        for (std::size_t i = 0; i < got[s].size() || i < sent[s].size(); ++i) {
            if (i < got[s].size() && i < sent[s].size() && got[s][i] == sent[s][i]) continue;
            os << "node " << d << ", message " << i << " from node " << s << ": ";
            if (i >= got[s].size())
                os << "never taken";
            else if (i >= sent[s].size())
                os << "one more than node " << s << " sent";
            else
                os << got[s][i].size() << " words starting "
                   << (got[s][i].empty() ? 0 : got[s][i][0]) << ", expected " << sent[s][i].size()
                   << " starting " << (sent[s][i].empty() ? 0 : sent[s][i][0]);
            return os.str();
        }
    }
    return "";
}

} // namespace hcube::test
