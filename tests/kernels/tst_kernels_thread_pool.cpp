// ThreadPool: every share runs exactly once per job, parallel_for covers [0, n) exactly once in
// grain-aligned chunks, rapid back-to-back dispatch, re-entrant calls, pools of one.
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kernels/cpu/thread_pool.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::kernels;

namespace {

struct ThreadsRow {
    std::string name;
    int threads;
};

std::vector<ThreadsRow> threads_rows() {
    std::vector<ThreadsRow> rows;
    for (int t : {1, 2, 3, 5})
        rows.push_back({std::to_string(t), t});
    return rows;
}

struct RangeRow {
    std::string name;
    int threads;
    int n;
    int grain;
};

std::vector<RangeRow> range_rows() {
    std::vector<RangeRow> rows;
    for (int t : {1, 3, 4})
        for (auto [n, g] : std::vector<std::pair<int, int>>{
                 {0, 1}, {1, 1}, {2, 16}, {17, 1}, {100, 16}, {1000, 7}, {4096, 64}})
            rows.push_back({mini_test::format("t%d/n%d/g%d", t, n, g), t, n, g});
    return rows;
}

} // namespace

MT_TEST_TABLE(runCallsEveryShareOnce, ThreadsRow, threads_rows()) {
    const int threads = row.threads;
    ThreadPool pool(threads);
    MT_REQUIRE_COMPARE(pool.size(), threads);
    std::vector<std::atomic<int>> hits(static_cast<size_t>(threads));
    std::atomic<int> wrong_count{0};
    std::mutex m;
    std::set<std::thread::id> ids;
    for (int rep = 0; rep < 50; ++rep)
        pool.run([&](int t, int n) {
            if (n != threads)
                ++wrong_count;
            hits[static_cast<size_t>(t)]++;
            std::lock_guard lock(m);
            ids.insert(std::this_thread::get_id());
        });
    MT_COMPARE(wrong_count.load(), 0);
    for (auto& h : hits)
        MT_COMPARE(h.load(), 50);
    MT_COMPARE(static_cast<int>(ids.size()), threads); // really distinct threads
}

MT_TEST_TABLE(parallelForCoversRange, RangeRow, range_rows()) {
    const int threads = row.threads;
    const int n = row.n;
    const int grain = row.grain;
    ThreadPool pool(threads);
    std::vector<std::atomic<int>> cover(static_cast<size_t>(n));
    std::atomic<int> misaligned{0};
    pool.parallel_for(n, grain, [&](int64_t b, int64_t e) {
        if (b % grain != 0 || b >= e)
            ++misaligned;
        for (int64_t i = b; i < e; ++i)
            cover[static_cast<size_t>(i)]++;
    });
    MT_COMPARE(misaligned.load(), 0);
    for (auto& c : cover)
        MT_COMPARE(c.load(), 1);
}

MT_TEST(rapidDispatch) {
    ThreadPool pool(3);
    std::atomic<int64_t> total{0};
    for (int rep = 0; rep < 20000; ++rep)
        pool.run([&](int t, int) { total += t + 1; });
    MT_COMPARE(total.load(), int64_t{20000} * 6);
}

MT_TEST(sleepingWorkersWake) {
    ThreadPool pool(2);
    std::atomic<int> c{0};
    pool.run([&](int, int) { ++c; });
    std::this_thread::sleep_for(std::chrono::milliseconds(50)); // workers go to futex wait
    pool.run([&](int, int) { ++c; });
    MT_COMPARE(c.load(), 4);
}

MT_TEST(reentrantRunIsInline) {
    ThreadPool pool(3);
    std::atomic<int> inner{0};
    pool.run([&](int, int) { pool.run([&](int, int) { ++inner; }); });
    MT_COMPARE(inner.load(), 9); // 3 outer shares x 3 inner shares
}

MT_TEST(destroyUnused) {
    for (int i = 0; i < 20; ++i)
        ThreadPool pool(4);
}

MINI_TEST_MAIN()
