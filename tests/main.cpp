#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include <sys/wait.h>

#include "deadline.hpp"
#include "sanitizers.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

// A hang (a lost wake-up, a wait nobody ends) fails its test case by name
// within its deadline instead of at meson's timeout with no message: after
// HCUBE_TEST_DEADLINE seconds (default 60, four times the longest case on a
// loaded machine; times the sanitizer slowdown) the process exits with 1.
double default_deadline() {
    const char* env = std::getenv("HCUBE_TEST_DEADLINE");
    const double seconds = env ? std::atof(env) : 60;
    return seconds * hcube::test::sanitizer_slowdown;
}

// A lost wake-up leaves every thread asleep: a case whose process used less
// than idle_cpu seconds of CPU over the last idle_window seconds is hung,
// unless a child it waits for does the work. No case sleeps that long, and a
// runnable process gets far more CPU than that even on a loaded machine.
const double idle_window = 10.0 * hcube::test::sanitizer_slowdown;
constexpr double idle_cpu = 0.1;

double process_cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

std::string seconds(double s) {
    return std::to_string(std::lround(s)) + " s";
}

bool has_children() {
    siginfo_t info{};
    return waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0;
}

// A rank of an MPI job waits for the other ranks asleep, so its own CPU says
// nothing of the job's: there the deadline and the backend's own quiet limit
// judge.
bool in_mpi_job() {
    return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") ||
           std::getenv("PMIX_SIZE");
}

void hung(const std::string& name, const std::string& why) {
    std::fprintf(stderr, "\ntest case \"%s\" %s: a hang, such as a lost wake-up\n", name.c_str(),
                 why.c_str());
    std::fflush(stderr);
    std::_Exit(1); // no unwinding: the hung threads hold locks
}

class deadline_listener : public doctest::IReporter {
public:
    explicit deadline_listener(const doctest::ContextOptions&) {}

    void test_case_start(const doctest::TestCaseData& tc) override {
        std::lock_guard lock(watch().mu);
        watch().name = tc.m_name;
        watch().limit = default_deadline();
        watch().since = clock_type::now();
        watch().cpu.clear();
        watch().running = true;
    }
    static void extend(double seconds) {
        std::lock_guard lock(watch().mu);
        const std::chrono::duration<double> took = clock_type::now() - watch().since;
        watch().limit = took.count() + seconds;
    }
    void test_case_end(const doctest::CurrentTestCaseStats&) override {
        std::lock_guard lock(watch().mu);
        watch().running = false;
    }
    void report_query(const doctest::QueryData&) override {}
    void test_run_start() override {}
    void test_run_end(const doctest::TestRunStats&) override {}
    void test_case_reenter(const doctest::TestCaseData&) override {}
    void test_case_exception(const doctest::TestCaseException&) override {}
    void subcase_start(const doctest::SubcaseSignature&) override {}
    void subcase_end() override {}
    void log_assert(const doctest::AssertData&) override {}
    void log_message(const doctest::MessageData&) override {}
    void test_case_skipped(const doctest::TestCaseData&) override {}

private:
    struct state {
        std::mutex mu;
        std::string name;
        double limit = 0;
        clock_type::time_point since;
        std::deque<std::pair<clock_type::time_point, double>> cpu; // this case's samples
        bool running = false;
    };
    // The watcher thread starts with the first test case and lives as long
    // as the process (it is never joined: exit ends it).
    static state& watch() {
        static state s;
        static const bool started = [] {
            std::thread([] {
                for (;;) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(100));
                    std::lock_guard lock(s.mu);
                    const auto now = clock_type::now();
                    const std::chrono::duration<double> took = now - s.since;
                    if (!s.running) continue;
                    if (took.count() >= s.limit)
                        hung(s.name,
                             "still running after " + seconds(took.count()) + " (its deadline)");
                    const double cpu = process_cpu_seconds();
                    s.cpu.emplace_back(now, cpu);
                    const std::chrono::duration<double> span = now - s.cpu.front().first;
                    if (span.count() < idle_window) continue;
                    if (cpu - s.cpu.front().second < idle_cpu && !has_children() && !in_mpi_job())
                        hung(s.name, "used almost no CPU for " + seconds(span.count()));
                    s.cpu.pop_front();
                }
            }).detach();
            return true;
        }();
        (void)started;
        return s;
    }
};

} // namespace

REGISTER_LISTENER("deadline", 1, deadline_listener);

void hcube::test::extend_deadline(double seconds) {
    deadline_listener::extend(seconds);
}
