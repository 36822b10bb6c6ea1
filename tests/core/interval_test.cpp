// Tests of privpost/core/interval.hpp: each operation encloses every value it can take (checked on random points),
// square is tight across 0, and invalid intervals throw.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "privpost/core/interval.hpp"
#include "privpost/core/random/uniform.hpp"

using namespace privpost;

TEST_CASE("interval arithmetic encloses point arithmetic", "[interval]") {
  std::mt19937_64 g(5);
  const interval a(-1.5, 2.0), b(0.5, 3.0);
  for (int i = 0; i < 10000; ++i) {
    const double x = a.lo + a.width() * draw_uniform(g), y = b.lo + b.width() * draw_uniform(g);
    REQUIRE((a + b).contains(x + y));
    REQUIRE((a - b).contains(x - y));
    REQUIRE((a * b).contains(x * y));
    REQUIRE((a / b).contains(x / y));
    REQUIRE(square(a).contains(x * x));
    REQUIRE(abs(a).contains(std::abs(x)));
    REQUIRE(exp(a).contains(std::exp(x)));
    REQUIRE(log(b).contains(std::log(y)));
    REQUIRE(sqrt(b).contains(std::sqrt(y)));
  }
}

TEST_CASE("square is tight; naive x * x is not", "[interval]") {
  const interval a(-1.0, 2.0);
  CHECK(square(a) == interval(0.0, 4.0));
  CHECK((a * a).lo == -2.0);
  CHECK(square(interval(-3.0, -1.0)) == interval(1.0, 9.0));
  CHECK(hull(interval(1.0, 2.0), interval(0.0)) == interval(0.0, 2.0));
}

TEST_CASE("invalid intervals and domains throw", "[interval]") {
  CHECK_THROWS_AS(interval(1.0, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(interval(std::nan(""), 0.0), std::invalid_argument);
  CHECK_THROWS_AS(log(interval(-1.0, 1.0)), std::domain_error);
  CHECK_THROWS_AS(sqrt(interval(-1.0, 1.0)), std::domain_error);
  CHECK_THROWS_AS(interval(1.0, 2.0) / interval(-1.0, 1.0), std::domain_error);
}
