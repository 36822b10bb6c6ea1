// Tests of privpost/diagnostics/ecdf_band.hpp (the band of the ECDF-difference plot):
//  1. simultaneous coverage: the ECDF of n fresh uniform values stays inside the 95% band in 95% of 2000 samples
//     (|coverage - 0.95| < 0.025: 3.5 standard errors of 2000 Bernoulli(0.95) trials, sqrt(0.95 x 0.05 / 2000) =
//     0.0049, plus the band's own simulation error), at n = 50 and n = 300 with 2000 simulations each;
//  2. it is simultaneous, not pointwise: gamma is well below 1 - level;
//  3. power: quantiles of an overdispersed posterior (Beta(0.6, 0.6)-distributed) and of a shifted one (u^0.8) leave
//     the band in most samples of n = 300, and a pointwise check of the same would not tell the level;
//  4. the edges are multiples of 1 / n, lower <= z <= upper, non-decreasing in z; bad input is refused by name.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "privpost/core/random/beta.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/diagnostics/ecdf_band.hpp"

using namespace privpost;

namespace {
template <class Draw>
double fraction_inside(const ecdf_band& band, int samples, Draw draw, std::mt19937_64& g) {
  int in = 0;
  std::vector<double> v(static_cast<std::size_t>(band.n));
  for (int s = 0; s < samples; ++s) {
    for (auto& x : v) x = draw(g);
    in += inside_band(band, v) ? 1 : 0;
  }
  return static_cast<double>(in) / samples;
}
}  // namespace

TEST_CASE("the ECDF band covers n uniform values simultaneously at its level", "[ecdf_band]") {
  std::mt19937_64 g(1402);
  for (const int n : {50, 300}) {
    const auto band = uniform_ecdf_band(n, 50, 0.95, 2000, g);
    const double cover = fraction_inside(
        band, 2000, [](std::mt19937_64& e) { return draw_uniform(e); }, g);
    INFO("n = " << n << ", gamma = " << band.gamma << ", coverage " << cover);
    CHECK(std::abs(cover - 0.95) < 0.025);
    CHECK(band.gamma < 0.02);  // 49 correlated pointwise tests: far below the pointwise 0.05
    CHECK(band.gamma > 0.0005);
    for (Eigen::Index i = 0; i < band.z.size(); ++i) {
      CHECK(band.lower(i) <= band.z(i));
      CHECK(band.upper(i) >= band.z(i));
      CHECK(std::abs(band.lower(i) * n - std::round(band.lower(i) * n)) < 1e-9);
      if (i > 0) CHECK(band.lower(i) >= band.lower(i - 1));
      if (i > 0) CHECK(band.upper(i) >= band.upper(i - 1));
    }
  }
}

TEST_CASE("the ECDF band rejects overdispersed and shifted quantiles", "[ecdf_band]") {
  std::mt19937_64 g(1403);
  const auto band = uniform_ecdf_band(300, 50, 0.95, 2000, g);
  const double wide = fraction_inside(
      band, 300, [](std::mt19937_64& e) { return draw_beta(e, 0.6, 0.6); }, g);
  const double shifted = fraction_inside(
      band, 300, [](std::mt19937_64& e) { return std::pow(draw_uniform(e), 0.8); }, g);
  INFO("inside: overdispersed " << wide << ", shifted " << shifted);
  CHECK(wide < 0.2);
  CHECK(shifted < 0.2);
}

TEST_CASE("ECDF band bad input", "[ecdf_band][errors]") {
  std::mt19937_64 g(1);
  CHECK_THROWS_WITH(uniform_ecdf_band(0, 50, 0.95, 1000, g), Catch::Contains("n is 0"));
  CHECK_THROWS_WITH(uniform_ecdf_band(10, 1, 0.95, 1000, g), Catch::Contains("points is 1"));
  CHECK_THROWS_WITH(uniform_ecdf_band(10, 50, 1.0, 1000, g), Catch::Contains("level is 1"));
  CHECK_THROWS_WITH(uniform_ecdf_band(10, 50, 0.95, 10, g), Catch::Contains("simulations is 10"));
  const auto band = uniform_ecdf_band(10, 5, 0.95, 200, g);
  const std::vector<double> three{0.1, 0.2, 0.3};
  CHECK_THROWS_WITH(inside_band(band, three), Catch::Contains("number of values is 3"));
  const std::vector<double> bad{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, std::nan("")};
  CHECK_THROWS_AS(inside_band(band, bad), std::invalid_argument);
}
