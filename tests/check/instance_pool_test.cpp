#include "check/instance_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace onnx_tv::check {
namespace {

// Instances that record how often each was started and how many ran at once.
struct Fake {
  explicit Fake(size_t n) : starts(n, 0) {}
  std::vector<int> starts;
  std::atomic<int> running{0};
  std::mutex mu;

  // Runs instance i for a moment; true when another ran at some point meanwhile. With
  // `meet`, waits (up to a few seconds) for another to run beside it.
  bool run(size_t i, bool meet = false) {
    {
      std::lock_guard<std::mutex> hold(mu);
      ++starts[i];
    }
    const int before = running++;
    bool crowded = before > 0;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(meet ? 5 : 0);
    do {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      crowded |= running.load() > 1;
    } while (meet && !crowded && std::chrono::steady_clock::now() < until);
    --running;
    return crowded;
  }
};

TEST(InstancePool, EveryInstanceOnceWhenAllContinue) {
  Fake fake(5);
  int64_t last = 0;
  prove_instances(5, 2, [&](size_t i) { fake.run(i); return InstanceEnd::Continues; },
                  [&](int64_t d, int64_t n) { EXPECT_EQ(n, 5); last = d; });
  EXPECT_EQ(fake.starts, (std::vector<int>{1, 1, 1, 1, 1}));
  EXPECT_EQ(last, 5);
}

TEST(InstancePool, NothingAfterTheFirstDeciderStartsAlone) {
  Fake fake(4);
  prove_instances(4, 1, [&](size_t i) { fake.run(i); return i == 1 ? InstanceEnd::Decides : InstanceEnd::Continues; },
                  [](int64_t, int64_t) {});
  EXPECT_EQ(fake.starts, (std::vector<int>{1, 1, 0, 0}));
}

// Started in another order than the grid's, the first decider in grid order still decides:
// every instance before it runs, none after it starts once it is known.
TEST(InstancePool, AStartOrderKeepsTheGridOrderOfDeciding) {
  std::vector<size_t> started;
  auto prove = [&](size_t decider) {
    return [&, decider](size_t i) {
      started.push_back(i);
      return i == decider ? InstanceEnd::Decides : InstanceEnd::Continues;
    };
  };
  prove_instances(4, 1, prove(2), [](int64_t, int64_t) {}, {}, {0, 2, 1, 3});
  EXPECT_EQ(started, (std::vector<size_t>{0, 2, 1}));
  started.clear();
  prove_instances(4, 1, prove(0), [](int64_t, int64_t) {}, {}, {2, 0, 1, 3});
  EXPECT_EQ(started, (std::vector<size_t>{2, 0}));
  started.clear();
  prove_instances(4, 1, prove(9), [](int64_t, int64_t) {}, {}, {3, 1, 2, 0});
  EXPECT_EQ(started, (std::vector<size_t>{3, 1, 2, 0}));
}

// An instance still running when one before it in grid order decides sees that it came after
// the decider (prove_grid then abandons it); nothing after the decider starts.
TEST(InstancePool, ARunningInstanceSeesAnEarlierDecider) {
  FirstDecider decider(4);
  std::atomic<bool> second_started{false}, saw{false};
  std::vector<int> starts(4, 0);
  std::mutex mu;
  auto wait_for = [](const std::function<bool()>& done) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!done() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  };
  prove_instances(
      4, 2,
      [&](size_t i) {
        {
          std::lock_guard<std::mutex> hold(mu);
          ++starts[i];
        }
        if (i == 0) {  // decides once the other runs beside it
          wait_for([&] { return second_started.load(); });
          return InstanceEnd::Decides;
        }
        second_started = true;
        wait_for([&] { return decider.precedes(i); });
        saw = decider.precedes(i);
        return InstanceEnd::Continues;
      },
      [](int64_t, int64_t) {}, {}, {}, &decider);
  EXPECT_TRUE(saw.load());
  EXPECT_EQ(decider.at(), 0u);
  EXPECT_EQ(starts, (std::vector<int>{1, 1, 0, 0}));
}

// Over the memory limit only while another instance runs: proven again alone, and the check
// goes on past it.
TEST(InstancePool, AnInstanceOverMemoryBesideAnotherIsProvenAgainAlone) {
  Fake fake(4);
  std::vector<int> ends;
  int settled = 0, settled_before_retry = -1;
  prove_instances(4, 2, [&](size_t i) {
        if (i == 1 && fake.starts[1] == 1) settled_before_retry = settled;
        const bool crowded = fake.run(i, i < 2 && fake.starts[i] == 0);  // 0 and 1 together at first
        return i == 1 && crowded ? InstanceEnd::OverMemory : InstanceEnd::Continues;
      }, [&](int64_t d, int64_t) { ends.push_back(int(d)); }, [&] { ++settled; });
  EXPECT_EQ(fake.starts, (std::vector<int>{1, 2, 1, 1}));
  EXPECT_EQ(ends, (std::vector<int>{1, 2, 3, 4}));  // instance 1 counted once, at its end
  EXPECT_EQ(settled, 1);
  EXPECT_EQ(settled_before_retry, 1);  // memory given back before the retry
}

// Over the memory limit alone: that is its verdict (UNKNOWN), and it decides.
TEST(InstancePool, AnInstanceOverMemoryAloneDecides) {
  Fake fake(3);
  prove_instances(3, 1, [&](size_t i) { fake.run(i); return i == 0 ? InstanceEnd::OverMemory : InstanceEnd::Continues; },
                  [](int64_t, int64_t) {});
  EXPECT_EQ(fake.starts, (std::vector<int>{1, 0, 0}));
}

// Over the memory limit even alone: the retry decides, and what comes after it is not retried.
TEST(InstancePool, ARetryOverMemoryDecides) {
  Fake fake(3);
  prove_instances(3, 3, [&](size_t i) {
        fake.run(i);
        return i == 0 || i == 2 ? InstanceEnd::OverMemory : InstanceEnd::Continues;
      }, [](int64_t, int64_t) {});
  EXPECT_EQ(fake.starts, (std::vector<int>{2, 1, 1}));
}

TEST(InstancePool, JobsResolveToCoresSharedByTheProcessesOfAMachine) {
  EXPECT_EQ(resolve_jobs(3, 1), 3);
  EXPECT_EQ(resolve_jobs(3, 4), 3);  // asked for: as asked
  const int all = resolve_jobs(0, 1);
  EXPECT_GE(all, 1);
  EXPECT_EQ(resolve_jobs(0, all), 1);
  EXPECT_EQ(resolve_jobs(0, all * 2), 1);  // never none
}

}  // namespace
}  // namespace onnx_tv::check
