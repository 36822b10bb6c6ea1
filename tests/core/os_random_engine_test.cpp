// Tests of privpost/core/random/os_random_engine.hpp: it models std::uniform_random_bit_generator, its output is
// uniform (KS on 20000 uniforms), two engines do not repeat each other, and it cannot be copied (replay risk).
#include <catch2/catch.hpp>

#include <set>
#include <type_traits>

#include "privpost/core/concepts.hpp"
#include "privpost/core/random/os_random_engine.hpp"
#include "privpost/core/random/uniform.hpp"
#include "support/statistical.hpp"

using namespace privpost;

static_assert(random_engine<os_random_engine>);
static_assert(!std::is_copy_constructible_v<os_random_engine>);

TEST_CASE("os_random_engine draws uniform, non-repeating words", "[os_random_engine]") {
  os_random_engine g;
  const auto xs = test::sample(test::ks_draws, [&] { return draw_uniform(g); });
  // The OS source is not seeded, so this one test is not deterministic; its false-alarm rate is 0.001.
  test::require_fits(xs, [](double x) { return x; });
  os_random_engine h;
  std::set<std::uint64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    seen.insert(g());
    seen.insert(h());
  }
  CHECK(seen.size() == 2000);
}
