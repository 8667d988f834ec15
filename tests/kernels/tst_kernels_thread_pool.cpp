// ThreadPool: every share runs exactly once per job, parallel_for covers [0, n) exactly once in
// grain-aligned chunks, rapid back-to-back dispatch, re-entrant calls, pools of one.
#include <QtTest>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "kernels/cpu/thread_pool.h"

using namespace llmwb::kernels;

class TestKernelsThreadPool : public QObject {
    Q_OBJECT
private slots:
    void runCallsEveryShareOnce_data() {
        QTest::addColumn<int>("threads");
        for (int t : {1, 2, 3, 5}) QTest::addRow("%d", t) << t;
    }
    void runCallsEveryShareOnce() {
        QFETCH(int, threads);
        ThreadPool pool(threads);
        QCOMPARE(pool.size(), threads);
        std::vector<std::atomic<int>> hits(static_cast<size_t>(threads));
        std::atomic<int> wrong_count{0};
        std::mutex m;
        std::set<std::thread::id> ids;
        for (int rep = 0; rep < 50; ++rep)
            pool.run([&](int t, int n) {
                if (n != threads) ++wrong_count;
                hits[static_cast<size_t>(t)]++;
                std::lock_guard lock(m);
                ids.insert(std::this_thread::get_id());
            });
        QCOMPARE(wrong_count.load(), 0);
        for (auto& h : hits) QCOMPARE(h.load(), 50);
        QCOMPARE(static_cast<int>(ids.size()), threads);  // really distinct threads
    }

    void parallelForCoversRange_data() {
        QTest::addColumn<int>("threads");
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("grain");
        for (int t : {1, 3, 4})
            for (auto [n, g] : std::vector<std::pair<int, int>>{{0, 1}, {1, 1}, {2, 16}, {17, 1}, {100, 16}, {1000, 7}, {4096, 64}})
                QTest::addRow("t%d/n%d/g%d", t, n, g) << t << n << g;
    }
    void parallelForCoversRange() {
        QFETCH(int, threads);
        QFETCH(int, n);
        QFETCH(int, grain);
        ThreadPool pool(threads);
        std::vector<std::atomic<int>> cover(static_cast<size_t>(n));
        std::atomic<int> misaligned{0};
        pool.parallel_for(n, grain, [&](int64_t b, int64_t e) {
            if (b % grain != 0 || b >= e) ++misaligned;
            for (int64_t i = b; i < e; ++i) cover[static_cast<size_t>(i)]++;
        });
        QCOMPARE(misaligned.load(), 0);
        for (auto& c : cover) QCOMPARE(c.load(), 1);
    }

    void rapidDispatch() {
        ThreadPool pool(3);
        std::atomic<int64_t> total{0};
        for (int rep = 0; rep < 20000; ++rep) pool.run([&](int t, int) { total += t + 1; });
        QCOMPARE(total.load(), int64_t{20000} * 6);
    }

    void sleepingWorkersWake() {
        ThreadPool pool(2);
        std::atomic<int> c{0};
        pool.run([&](int, int) { ++c; });
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // workers go to futex wait
        pool.run([&](int, int) { ++c; });
        QCOMPARE(c.load(), 4);
    }

    void reentrantRunIsInline() {
        ThreadPool pool(3);
        std::atomic<int> inner{0};
        pool.run([&](int, int) { pool.run([&](int, int) { ++inner; }); });
        QCOMPARE(inner.load(), 9);  // 3 outer shares x 3 inner shares
    }

    void destroyUnused() {
        for (int i = 0; i < 20; ++i) ThreadPool pool(4);
    }
};

QTEST_APPLESS_MAIN(TestKernelsThreadPool)
#include "tst_kernels_thread_pool.moc"
