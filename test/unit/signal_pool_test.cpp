// Signal memory: words are distinct and aligned, recycled, never reset (values only grow, so a
// recycled word cannot satisfy a stale wait), spread over cache lines, and chunk hooks see every
// chunk.
#include "base/signal_pool.hpp"

#include <cstdint>
#include <set>
#include <vector>

#include "catch.hpp"

using mpix::SignalPool;
using mpix::SignalWord;

TEST_CASE("words are distinct, 8-byte aligned and counted", "[signal_pool]") {
  SignalPool pool;
  std::set<uint64_t *> seen;
  std::vector<SignalWord> words;
  for (int i = 0; i < 100; ++i) {
    SignalWord w = pool.acquire();
    REQUIRE(w.word != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(w.word) % 8 == 0);
    CHECK(*w.word == 0);  // fresh memory starts at 0
    CHECK(seen.insert(w.word).second);
    words.push_back(w);
  }
  CHECK(pool.words_in_use() == 100);
  for (auto &w : words) pool.release(w);
  CHECK(pool.words_in_use() == 0);
  pool.release(SignalWord{});  // releasing a null word is a no-op
  CHECK(pool.words_in_use() == 0);
}

TEST_CASE("the first words of a chunk lie on different cache lines", "[signal_pool]") {
  SignalPool pool;
  std::set<uintptr_t> lines;
  for (int i = 0; i < 64; ++i) lines.insert(reinterpret_cast<uintptr_t>(pool.acquire().word) / 64);
  CHECK(lines.size() == 64);
}

TEST_CASE("released words are recycled and keep their value", "[signal_pool]") {
  SignalPool pool;
  SignalWord a = pool.acquire();
  *a.word = 41;
  pool.release(a);
  SignalWord b = pool.acquire();
  CHECK(b.word == a.word);  // the most recently released word comes back first
  CHECK(*b.word == 41);     // not reset: its next user waits for a value above 41
  pool.release(b);
}

TEST_CASE("more words than a chunk holds: new chunks, hooks see each", "[signal_pool]") {
  std::vector<std::pair<void *, bool>> events;  // outlives the pool: its hooks run at teardown
  {
    SignalPool pool;
    SignalWord first = pool.acquire();  // one chunk exists before the hook
    pool.add_hook([&](void *base, std::size_t bytes, bool added) {
      CHECK(bytes == SignalPool::kChunkBytes);
      events.emplace_back(base, added);
    });
    REQUIRE(events.size() == 1);  // told about the existing chunk at once
    CHECK(events[0].second);
    std::vector<SignalWord> words{first};
    for (std::size_t i = 1; i < SignalPool::kWordsPerChunk + 10; ++i)
      words.push_back(pool.acquire());
    REQUIRE(events.size() == 2);  // a second chunk
    CHECK(events[1].second);
    CHECK(events[1].first != events[0].first);
    std::set<uint64_t *> distinct;
    for (auto &w : words) distinct.insert(w.word);
    CHECK(distinct.size() == words.size());
    CHECK(pool.words_in_use() == words.size());
    for (auto &w : words) pool.release(w);
  }
  // Destroying the pool hands both chunks back through the hook.
  REQUIRE(events.size() == 4);
  CHECK_FALSE(events[2].second);
  CHECK_FALSE(events[3].second);
}
