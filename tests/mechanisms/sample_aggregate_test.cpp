// Tests of privpost/mechanisms/partition_plan.hpp, above_threshold.hpp and sample_aggregate.hpp (partition-release
// spec A.9 items 1-4). Properties:
//  1. partition plan: sizes differ by at most one, partitions are disjoint and cover every record, the position of
//     record 0 is uniform (chi-square over 10^4 plans, n = 10, M = 3), likelihood_power = n / n_j, and the constructor
//     takes counts only (never values); draw_index is uniform (chi-square) and exact at its ends;
//  2. sensitivity by deterministic fuzz (10^4 cases per combiner and for the quantile mean): changing one partition's
//     outputs arbitrarily (NaN and out-of-range values included) moves the aggregate vector by at most its documented
//     L1 sensitivity; a NaN output becomes the fallback;
//  3. noise law: 10^5 seeded releases of fixed inputs, KS of noisy aggregate - aggregate against Laplace(noise scale),
//     for Fisher at the corrected scale -2 ln(p*) / epsilon = 55.262 (p* = 1e-3, epsilon = 0.25), with power against
//     the thesis's scale / M; the quantile release likewise; noise-only intervals cover at their rate;
//  4. AboveThreshold: stops at t = 0 in > 99% of 10^4 runs when every value is the centre at epsilon 10; a search that
//     never passes ends capped at max_half_width; stochastic DP check on neighbouring inputs (2 x 10^5 runs each):
//     P(t | D) <= e^epsilon P(t | D') + 0.01 for every t hit >= 1000 times, with power at a tenth of epsilon;
//  5. post-processing: the combiners' maps (reference slopes of spec A.7), monotone release vectors, sorted quantiles;
//  6. bad input: one test per argument check.
#include <catch2/catch.hpp>

#include <boost/math/distributions/laplace.hpp>
#include <cmath>
#include <random>
#include <set>
#include <type_traits>
#include <vector>

#include "privpost/core/random/uniform.hpp"
#include "privpost/mechanisms/above_threshold.hpp"
#include "privpost/mechanisms/partition_plan.hpp"
#include "privpost/mechanisms/sample_aggregate.hpp"
#include "support/statistical.hpp"

using namespace privpost;

// The plan is a function of counts and randomness only: no constructor takes the records.
static_assert(!std::is_constructible_v<partition_plan, std::vector<double>, std::size_t>);
static_assert(!std::is_constructible_v<partition_plan, std::vector<double>, std::size_t, std::mt19937_64&>);

namespace sample_aggregate_tests {
constexpr probability_combiner all_combiners[] = {probability_combiner::normality, probability_combiner::normality_corrected,
                                                  probability_combiner::fisher, probability_combiner::stouffer_clipped};

probability_release_options options_for(probability_combiner c, double epsilon) {
  probability_release_options o;
  o.combiner = c;
  o.epsilon = epsilon;
  return o;
}

double l1_distance(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0.0;
  for (std::size_t k = 0; k < a.size(); ++k) d += std::abs(a[k] - b[k]);
  return d;
}

// An arbitrary partition output: mostly in range, sometimes exactly 0 or 1, NaN or outside the range.
double fuzz_value(std::mt19937_64& g, double lo, double hi) {
  const double u = draw_uniform(g);
  if (u < 0.05) return std::numeric_limits<double>::quiet_NaN();
  if (u < 0.10) return lo - 3.0 * (hi - lo) - 1.0;
  if (u < 0.15) return hi + 7.0 * (hi - lo) + 1.0;
  if (u < 0.20) return lo;
  if (u < 0.25) return hi;
  return lo + (hi - lo) * draw_uniform(g);
}
}  // namespace sample_aggregate_tests

using namespace sample_aggregate_tests;

TEST_CASE("draw_index is uniform and exact at its ends", "[partition_plan]") {
  std::mt19937_64 g(11);
  std::vector<double> counts(7, 0.0);
  for (int i = 0; i < 70000; ++i) counts[draw_index(g, 7)] += 1.0;
  CHECK(test::chi_square_p_value(counts, std::vector<double>(7, 1.0 / 7.0)) > test::ks_level);
  CHECK(draw_index(g, 1) == 0);
  const std::uint64_t top = std::uint64_t{1} << 53;
  for (int i = 0; i < 100; ++i) CHECK(draw_index(g, top) < top);
  CHECK_THROWS_AS(draw_index(g, 0), std::invalid_argument);
  CHECK_THROWS_AS(draw_index(g, top + 1), std::invalid_argument);
}

TEST_CASE("partition_plan: sizes within one, disjoint, covering, uniform positions", "[partition_plan]") {
  std::mt19937_64 g(2024);
  for (std::size_t n : {7u, 10u, 100u, 1001u}) {
    for (std::size_t m : {2u, 3u}) {
      const partition_plan plan(n, m, g);
      REQUIRE(plan.partitions() == m);
      REQUIRE(plan.records() == n);
      std::vector<int> seen(n, 0);
      std::size_t smallest = n, largest = 0;
      for (std::size_t j = 0; j < m; ++j) {
        const auto members = plan.members(j);
        REQUIRE(members.size() == plan.size(j));
        smallest = std::min(smallest, members.size());
        largest = std::max(largest, members.size());
        for (auto i : members) ++seen.at(i);
        CHECK(plan.likelihood_power(j) == Approx(static_cast<double>(n) / static_cast<double>(members.size())));
      }
      CHECK(largest - smallest <= 1);
      CHECK(plan.size(0) == (n + m - 1) / m);  // the first n mod M partitions hold the extra record
      for (int c : seen) CHECK(c == 1);
    }
  }
  // Record 0's position in the random order is uniform over the 10 positions (so its partition has probability
  // n_j / n).
  std::vector<double> position(10, 0.0), partition(3, 0.0);
  for (int r = 0; r < 10000; ++r) {
    const partition_plan plan(10, 3, g);
    std::size_t offset = 0;
    for (std::size_t j = 0; j < 3; ++j) {
      const auto members = plan.members(j);
      for (std::size_t k = 0; k < members.size(); ++k)
        if (members[k] == 0) {
          position[offset + k] += 1.0;
          partition[j] += 1.0;
        }
      offset += members.size();
    }
  }
  CHECK(test::chi_square_p_value(position, std::vector<double>(10, 0.1)) > test::ks_level);
  CHECK(test::chi_square_p_value(partition, {0.4, 0.3, 0.3}) > test::ks_level);
  // The test has power: record 0 in the first partition always (sort-then-chunk of a sorted file) is rejected.
  CHECK(test::chi_square_p_value({10000.0, 0.0, 0.0}, {0.4, 0.3, 0.3}) < test::power_level);
}

TEST_CASE("partition_plan draws from the OS CSPRNG by default", "[partition_plan]") {
  const partition_plan a(1000, 10), b(1000, 10);
  CHECK(a.size(3) == 100);
  // Two CSPRNG plans agree on partition 0's members with probability 0 for practical purposes.
  CHECK(!std::equal(a.members(0).begin(), a.members(0).end(), b.members(0).begin()));
}

TEST_CASE("partition_plan refuses bad counts", "[partition_plan]") {
  std::mt19937_64 g(1);
  CHECK_THROWS_AS(partition_plan(10, 1, g), std::invalid_argument);
  CHECK_THROWS_AS(partition_plan(10, 0, g), std::invalid_argument);
  CHECK_THROWS_AS(partition_plan(10, 6, g), std::invalid_argument);  // M > n / 2
  CHECK_THROWS_AS(partition_plan(3, 5, g), std::invalid_argument);   // n < M
  CHECK_THROWS_AS(partition_plan(100, 10, g, 11), std::invalid_argument);
  CHECK_THROWS_AS(partition_plan(100, 10, g, 0), std::invalid_argument);
  CHECK_NOTHROW(partition_plan(10, 5, g));
  CHECK_NOTHROW(partition_plan(10, 10, g, 1));
  const partition_plan plan(10, 5, g);
  CHECK_THROWS_AS(plan.members(5), std::invalid_argument);
  CHECK_THROWS_AS(plan.size(5), std::invalid_argument);
  try {
    partition_plan(10, 6, g);
  } catch (const std::invalid_argument& e) {
    CHECK_THAT(e.what(),
               Catch::Matchers::Contains("partitions is 6") && Catch::Matchers::Contains("at most n / min_partition_size = 5"));
  }
}

TEST_CASE("sample and aggregate: one partition moves the aggregate by at most the sensitivity (fuzz)", "[sample_aggregate]") {
  std::mt19937_64 g(42);
  for (auto c : all_combiners) {
    const auto o = options_for(c, 1.0);
    double worst = 0.0;
    for (int i = 0; i < 10000; ++i) {
      const std::size_t m = 2 + draw_index(g, 40), k = 1 + draw_index(g, 4);
      std::vector<std::vector<double>> p(m, std::vector<double>(k));
      for (auto& row : p)
        for (auto& v : row) v = fuzz_value(g, 0.0, 1.0);
      std::size_t fallbacks = 0;
      const auto before = aggregate_partition_probabilities(p, k, o, fallbacks);
      auto& changed = p[draw_index(g, m)];
      if (draw_uniform(g) < 0.1)
        changed.resize(draw_index(g, 6));  // a callback that returned the wrong number of values
      else
        for (auto& v : changed) v = fuzz_value(g, 0.0, 1.0);
      const auto after = aggregate_partition_probabilities(p, k, o, fallbacks);
      const double bound = static_cast<double>(k) * sample_aggregate_sensitivity(o, m);
      worst = std::max(worst, l1_distance(before, after) / bound);
    }
    INFO(combiner_name(c));
    CHECK(worst <= 1.0 + 1e-12);
    CHECK(worst > 0.5);  // the fuzz reaches the bound's order, so the check is not vacuous
  }
  // The quantile mean: clipped to [c - b, c + b], L levels, M partitions: L1 sensitivity L 2 b / M.
  double worst = 0.0;
  for (int i = 0; i < 10000; ++i) {
    const std::size_t m = 2 + draw_index(g, 40), levels = 1 + draw_index(g, 3);
    const double center = 4.0 * draw_uniform(g) - 2.0, half = 0.1 + 5.0 * draw_uniform(g);
    std::vector<std::vector<double>> q(m, std::vector<double>(levels));
    for (auto& row : q)
      for (auto& v : row) v = fuzz_value(g, center - 2.0 * half, center + 2.0 * half);
    std::size_t fallbacks = 0;
    const auto before = aggregate_partition_quantiles(q, levels, center, half, fallbacks);
    for (auto& v : q[draw_index(g, m)]) v = fuzz_value(g, center - 2.0 * half, center + 2.0 * half);
    const auto after = aggregate_partition_quantiles(q, levels, center, half, fallbacks);
    worst = std::max(worst, l1_distance(before, after) / (static_cast<double>(levels) * 2.0 * half / static_cast<double>(m)));
  }
  CHECK(worst <= 1.0 + 1e-12);
  CHECK(worst > 0.5);
}

TEST_CASE("sample and aggregate: NaN and out-of-range outputs become the fallback, counted privately", "[sample_aggregate]") {
  auto o = options_for(probability_combiner::normality_corrected, 1.0);
  o.fallback = 0.25;
  const std::vector<std::vector<double>> p = {{0.5}, {std::numeric_limits<double>::quiet_NaN()}, {1.5}, {}, {0.75}};
  std::size_t fallbacks = 0;
  const auto a = aggregate_partition_probabilities(p, 1, o, fallbacks);
  CHECK(a[0] == Approx((0.5 + 0.25 + 0.25 + 0.25 + 0.75) / 5.0));
  CHECK(fallbacks == 3);
  const std::vector<std::vector<double>> q = {{1.0, 2.0}, {std::numeric_limits<double>::infinity(), 3.0}, {5.0}};
  fallbacks = 0;
  const auto b = aggregate_partition_quantiles(q, 2, 0.5, 2.0, fallbacks);
  // Partition 1: +inf -> centre 0.5, 3 clipped to 2.5; partition 2: wrong shape -> centre for both levels.
  CHECK(b[0] == Approx((1.0 + 0.5 + 0.5) / 3.0));
  CHECK(b[1] == Approx((2.0 + 2.5 + 0.5) / 3.0));
  CHECK(fallbacks == 3);
}

TEST_CASE("sample and aggregate: the noise is Laplace at the documented scale (KS, 10^5 releases)", "[sample_aggregate]") {
  std::mt19937_64 g(7);
  std::mt19937_64 inputs(8);
  const std::vector<double> cutoffs = {-1.0, 0.0, 2.0};
  std::vector<std::vector<double>> p(40, std::vector<double>(3));
  for (auto& row : p) {
    for (auto& v : row) v = draw_uniform(inputs);
    std::sort(row.begin(), row.end());
  }
  for (auto c : all_combiners) {
    const auto o = options_for(c, 0.25);
    std::size_t fallbacks = 0;
    const auto exact = aggregate_partition_probabilities(p, 3, o, fallbacks);
    std::vector<double> noise;
    noise.reserve(100000);
    double scale = 0.0;
    for (int i = 0; i < 100000 / 3 + 1; ++i) {
      const auto r = release_posterior_probabilities(p, cutoffs, o, g);
      scale = r.noise_scale;
      for (std::size_t k = 0; k < 3; ++k) noise.push_back(r.noisy_aggregate[k] - exact[k]);
      CHECK(r.fallbacks == 0);
    }
    INFO(combiner_name(c));
    const boost::math::laplace_distribution<double> law(0.0, scale);
    test::require_fits(noise, [&](double x) { return boost::math::cdf(law, x); });
    if (c == probability_combiner::fisher) {
      // The sum's sensitivity is the cap -2 ln(p*), not cap / M: three cutoffs at epsilon 0.25 give 3 x 55.262.
      CHECK(scale == Approx(3.0 * 55.262).epsilon(1e-4));
      const boost::math::laplace_distribution<double> thesis(0.0, scale / 40.0);
      test::require_rejects(noise, [&](double x) { return boost::math::cdf(thesis, x); });
    }
  }
  // One cutoff: the spec's reference scale.
  const std::vector<double> one = {0.0};
  std::vector<std::vector<double>> p1(1000, std::vector<double>{0.3});
  CHECK(release_posterior_probabilities(p1, one, options_for(probability_combiner::fisher, 0.25), g).noise_scale ==
        Approx(55.262).epsilon(1e-4));
  CHECK(release_posterior_probabilities(p1, one, options_for(probability_combiner::normality, 0.25), g).noise_scale ==
        Approx(0.004));
  // The quantile release: two levels, b = 4, M = 100, epsilon2 = 0.45: scale 2 x 2 x 4 / (100 x 0.45).
  std::vector<std::vector<double>> q(100, std::vector<double>{1.9, 2.1});
  const std::vector<double> levels = {0.025, 0.975};
  bound_search_result bounds;
  bounds.half_width = 4.0;
  bounds.budget = {0.45, 0.0};
  std::vector<double> noise;
  for (int i = 0; i < 50000; ++i) {
    const auto r = release_posterior_quantiles(q, levels, bounds, 0.45, g);
    CHECK(r.noise_scale == Approx(16.0 / 45.0));
    CHECK(r.budget.epsilon == Approx(0.9));
    CHECK(r.values[0] <= r.values[1]);
    noise.push_back(r.noisy_aggregate[0] - 1.9);
    noise.push_back(r.noisy_aggregate[1] - 2.1);
  }
  const boost::math::laplace_distribution<double> law(0.0, 16.0 / 45.0);
  test::require_fits(noise, [&](double x) { return boost::math::cdf(law, x); });
}

TEST_CASE("sample and aggregate: noise-only intervals cover the noiseless value at their rate", "[sample_aggregate]") {
  std::mt19937_64 g(99);
  std::vector<std::vector<double>> p(50);
  for (std::size_t j = 0; j < p.size(); ++j) p[j] = {0.2 + 0.01 * static_cast<double>(j % 20)};
  const std::vector<double> cutoff = {1.0};
  const int runs = 4000;
  for (auto c : all_combiners) {
    const auto o = options_for(c, 0.5);
    std::size_t fallbacks = 0;
    const double truth = combined_probability(o, p.size(), aggregate_partition_probabilities(p, 1, o, fallbacks)[0]);
    int covered = 0;
    for (int i = 0; i < runs; ++i) {
      const auto r = release_posterior_probabilities(p, cutoff, o, g);
      const auto [lo, hi] = noise_only_interval(r, 0, 0.1);
      covered += (lo <= truth && truth <= hi) ? 1 : 0;
    }
    INFO(combiner_name(c) << ": coverage " << static_cast<double>(covered) / runs);
    // Binomial(4000, 0.9): 3.5 sds = 0.017. For the normality maps a clamped aggregate can make the map flat, which
    // only widens the interval: coverage may exceed 0.9, never fall short.
    CHECK(static_cast<double>(covered) / runs >= 0.9 - 0.017);
    if (c == probability_combiner::stouffer_clipped || c == probability_combiner::fisher)
      CHECK(static_cast<double>(covered) / runs <= 0.9 + 0.017);
  }
}

TEST_CASE("sample and aggregate: the quantiles' simultaneous intervals cover every level after sorting", "[sample_aggregate]") {
  // Three levels whose noiseless clipped means (1.9, 2.0, 2.1) are close against the noise (scale 3 x 2 x 4 / (100 x
  // 0.45) = 0.533): sorting reorders the aggregate in most releases, so an interval centred on a level's unsorted
  // aggregate and printed beside the sorted value would sit next to another level's value.
  std::mt19937_64 g(2024);
  const std::vector<std::vector<double>> q(100, std::vector<double>{1.9, 2.0, 2.1});
  const std::vector<double> levels = {0.25, 0.5, 0.75}, truth = {1.9, 2.0, 2.1};
  bound_search_result bounds;
  bounds.half_width = 4.0;
  const int runs = 4000;
  int all_covered = 0, reordered = 0;
  for (int i = 0; i < runs; ++i) {
    const auto r = release_posterior_quantiles(q, levels, bounds, 0.45, g);
    const auto intervals = noise_only_intervals(r, 0.1);
    REQUIRE(intervals.size() == 3);
    bool all = true;
    for (std::size_t l = 0; l < 3; ++l) {
      CHECK(intervals[l].first < r.values[l]);  // each centred on its own row's released value
      CHECK(intervals[l].second - r.values[l] == Approx(r.values[l] - intervals[l].first));
      all = all && intervals[l].first <= truth[l] && truth[l] <= intervals[l].second;
    }
    all_covered += all ? 1 : 0;
    reordered += r.values != r.noisy_aggregate ? 1 : 0;
  }
  INFO("simultaneous coverage " << static_cast<double>(all_covered) / runs << ", reordered " << reordered);
  CHECK(reordered > runs / 2);
  // Before sorting the three intervals cover together with probability 0.9 exactly (independent Laplace noises);
  // sorting can only keep or improve that (the sup-norm contraction the header states). Binomial(4000, 0.9): 3.5 sds =
  // 0.017. The upper bound: the intervals are not a wider rule in disguise (Bonferroni's t would give 0.902-0.91).
  CHECK(static_cast<double>(all_covered) / runs >= 0.9 - 0.017);
  CHECK(static_cast<double>(all_covered) / runs <= 0.97);
  bounds.half_width = 1.0;
  const auto r = release_posterior_quantiles(q, levels, bounds, 0.45, g);
  CHECK_THROWS_WITH(noise_only_intervals(r, 1.0), Catch::Contains("alpha"));
  CHECK_THROWS_WITH(noise_only_intervals(quantile_release{}, 0.1), Catch::Contains("at least 1"));
}

TEST_CASE("sample and aggregate: post-processing maps and monotone vectors", "[sample_aggregate]") {
  // Spec A.7: at M = 1000 and epsilon 0.25 the Laplace scale on the mean is 0.004 (sd 0.00566); at a mean of 0.5 the
  // released z-score moves by 0.45 sd (Eq. 3.10) or 0.63 sd (corrected).
  const double h = 1e-6, sd = 0.004 * std::sqrt(2.0);
  for (auto [c, slope] :
       {std::pair{probability_combiner::normality, 0.448}, std::pair{probability_combiner::normality_corrected, 0.634}}) {
    const auto o = options_for(c, 0.25);
    const double dz =
        (normal_quantile(combined_probability(o, 1000, 0.5 + h)) - normal_quantile(combined_probability(o, 1000, 0.5 - h))) /
        (2 * h);
    CHECK(dz * sd == Approx(slope).epsilon(0.01));
  }
  const auto n = options_for(probability_combiner::normality, 1.0);
  CHECK(combined_probability(n, 10, -0.1) == 0.0);
  CHECK(combined_probability(n, 10, 1.2) == 1.0);
  CHECK(combined_probability(n, 10, 0.5) == Approx(0.5));
  const auto f = options_for(probability_combiner::fisher, 1.0);
  CHECK(combined_probability(f, 10, -5.0) == 1.0);
  CHECK(combined_probability(f, 10, 20.0) == Approx(0.4579297).epsilon(1e-5));  // 1 - F_chi2(20; 20 df)
  const auto s = options_for(probability_combiner::stouffer_clipped, 1.0);
  CHECK(combined_probability(s, 4, 0.5) == Approx(normal_cdf(1.0)));
  CHECK(sample_aggregate_term(s, 0.0) == -3.0);
  CHECK(sample_aggregate_term(s, 1.0) == 3.0);
  CHECK(sample_aggregate_term(f, 0.0) == Approx(-2.0 * std::log(1e-3)));
  CHECK(sample_aggregate_term(f, 0.5) == Approx(-2.0 * std::log(0.5)));

  std::vector<double> y = {0.1, 0.3, 0.2, 0.2, 0.9, 0.5};
  make_nondecreasing(y);
  const std::vector<double> expected = {0.1, 0.7 / 3.0, 0.7 / 3.0, 0.7 / 3.0, 0.7, 0.7};
  for (std::size_t i = 0; i < y.size(); ++i) CHECK(y[i] == Approx(expected[i]));
  // Large noise on five cutoffs: every released vector is non-decreasing.
  std::mt19937_64 g(5);
  const std::vector<double> cutoffs = {-2, -1, 0, 1, 2};
  std::vector<std::vector<double>> p(10, {0.1, 0.3, 0.5, 0.7, 0.9});
  for (auto c : all_combiners)
    for (int i = 0; i < 200; ++i) {
      const auto r = release_posterior_probabilities(p, cutoffs, options_for(c, 0.05), g);
      CHECK(std::is_sorted(r.probability.begin(), r.probability.end()));
      for (double v : r.probability) CHECK((v >= 0.0 && v <= 1.0));
    }
}

TEST_CASE("AboveThreshold: stopping, cap and a stochastic DP check", "[above_threshold]") {
  std::mt19937_64 g(31);
  bound_search_options o;
  o.center = 2.0;
  o.base_half_width = 1.0;
  o.max_half_width = 1024.0;
  // Every value at the centre, epsilon 10: the threshold 0.9 M = 90 is passed at t = 0.
  const std::vector<std::vector<double>> at_center(100, std::vector<double>{2.0});
  int zero = 0;
  for (int i = 0; i < 10000; ++i) zero += private_bound_search(at_center, o, 10.0, g).doublings == 0 ? 1 : 0;
  CHECK(zero > 9900);
  // Values beyond the cap: no query passes, the search ends capped at max_half_width.
  o.max_half_width = 8.0;
  const std::vector<std::vector<double>> far(100, std::vector<double>{1e6});
  const auto capped = private_bound_search(far, o, 1.0, g);
  CHECK(capped.capped);
  CHECK(capped.half_width == 8.0);
  CHECK(capped.doublings == 3);
  CHECK(capped.budget.epsilon == 1.0);
  // A non-power-of-two cap: the last interval is the cap itself.
  o.max_half_width = 5.0;
  const auto last = private_bound_search(far, o, 1.0, g);
  CHECK(last.doublings == 3);
  CHECK(last.half_width == 5.0);

  // Neighbouring inputs: D' moves one partition's value from inside I_0 to far outside. The stopping index is
  // epsilon-DP: P(t | D) <= e^epsilon P(t | D') (+ 0.01 for sampling error) both ways, for every t hit >= 1000 times.
  o.center = 0.0;
  o.max_half_width = 64.0;
  const double epsilon = 1.0;
  std::vector<std::vector<double>> d(20, std::vector<double>{0.5});
  d[18] = {3.0};
  d[19] = {-3.0};
  auto d2 = d;
  d2[0] = {1e3};
  const int runs = 200000;
  std::vector<double> hits_d(8, 0.0), hits_d2(8, 0.0);
  for (int i = 0; i < runs; ++i) {
    hits_d[static_cast<std::size_t>(private_bound_search(d, o, epsilon, g).doublings)] += 1.0;
    hits_d2[static_cast<std::size_t>(private_bound_search(d2, o, epsilon, g).doublings)] += 1.0;
  }
  double largest_ratio = 0.0;
  for (std::size_t t = 0; t < hits_d.size(); ++t) {
    const double a = hits_d[t] / runs, b = hits_d2[t] / runs;
    if (hits_d[t] >= 1000 || hits_d2[t] >= 1000) {
      INFO("t = " << t << ": P(t | D) = " << a << ", P(t | D') = " << b);
      CHECK(a <= std::exp(epsilon) * b + 0.01);
      CHECK(b <= std::exp(epsilon) * a + 0.01);
      largest_ratio = std::max(largest_ratio, std::max(a - std::exp(epsilon / 10) * b, b - std::exp(epsilon / 10) * a));
    }
  }
  // Power: the neighbours are distinguishable at a tenth of the budget (the check would catch a 10x too small noise).
  INFO("largest P(t | D) - e^(epsilon / 10) P(t | D'): " << largest_ratio);
  CHECK(largest_ratio > 0.01);
}

TEST_CASE("sample and aggregate releases refuse bad input", "[sample_aggregate]") {
  std::mt19937_64 g(3);
  const std::vector<std::vector<double>> p(10, std::vector<double>{0.4, 0.6});
  const std::vector<double> cutoffs = {0.0, 1.0};
  auto o = options_for(probability_combiner::normality_corrected, 1.0);
  CHECK_NOTHROW(release_posterior_probabilities(p, cutoffs, o, g));
  CHECK_THROWS_AS(release_posterior_probabilities(std::vector<std::vector<double>>(1, {0.4, 0.6}), cutoffs, o, g),
                  std::invalid_argument);
  CHECK_THROWS_AS(release_posterior_probabilities(p, std::vector<double>{1.0, 0.0}, o, g), std::invalid_argument);
  CHECK_THROWS_AS(release_posterior_probabilities(p, std::vector<double>{0.0, 0.0}, o, g), std::invalid_argument);
  CHECK_THROWS_AS(release_posterior_probabilities(p, std::vector<double>{}, o, g), std::invalid_argument);
  CHECK_THROWS_AS(release_posterior_probabilities(p, std::vector<double>{0.0, std::nan("")}, o, g), std::invalid_argument);
  for (double bad : {0.0, -1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    auto b = o;
    b.epsilon = bad;
    CHECK_THROWS_AS(release_posterior_probabilities(p, cutoffs, b, g), std::invalid_argument);
  }
  for (double bad : {0.0, 1.0, std::nan("")}) {
    auto b = o;
    b.p_star = bad;
    CHECK_THROWS_AS(release_posterior_probabilities(p, cutoffs, b, g), std::invalid_argument);
  }
  for (double bad : {-0.1, 1.1, std::nan("")}) {
    auto b = o;
    b.fallback = bad;
    CHECK_THROWS_AS(release_posterior_probabilities(p, cutoffs, b, g), std::invalid_argument);
  }
  auto z = o;
  z.z_clip = 0.0;
  CHECK_THROWS_AS(release_posterior_probabilities(p, cutoffs, z, g), std::invalid_argument);
  CHECK_THROWS_AS(parse_probability_combiner("stouffer"), std::invalid_argument);
  for (auto c : all_combiners) CHECK(parse_probability_combiner(combiner_name(c)) == c);

  bound_search_result bounds;
  bounds.half_width = 1.0;
  const std::vector<double> levels = {0.025, 0.975};
  CHECK_NOTHROW(release_posterior_quantiles(p, levels, bounds, 1.0, g));
  CHECK_THROWS_AS(release_posterior_quantiles(p, std::vector<double>{0.0, 0.5}, bounds, 1.0, g), std::invalid_argument);
  CHECK_THROWS_AS(release_posterior_quantiles(p, std::vector<double>{0.5, 1.0}, bounds, 1.0, g), std::invalid_argument);
  CHECK_THROWS_AS(release_posterior_quantiles(p, std::vector<double>{0.9, 0.1}, bounds, 1.0, g), std::invalid_argument);
  CHECK_THROWS_AS(release_posterior_quantiles(p, levels, bounds, 0.0, g), std::invalid_argument);
  auto wide = bounds;
  wide.half_width = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(release_posterior_quantiles(p, levels, wide, 1.0, g), std::invalid_argument);

  bound_search_options s;
  s.max_half_width = 8.0;
  CHECK_NOTHROW(private_bound_search(p, s, 1.0, g));
  CHECK_THROWS_AS(private_bound_search(p, s, 0.0, g), std::invalid_argument);
  CHECK_THROWS_AS(private_bound_search(std::vector<std::vector<double>>(1, {0.0}), s, 1.0, g), std::invalid_argument);
  auto s1 = s;
  s1.max_half_width = 0.0;  // required
  CHECK_THROWS_AS(private_bound_search(p, s1, 1.0, g), std::invalid_argument);
  auto s2 = s;
  s2.fraction = 0.0;
  CHECK_THROWS_AS(private_bound_search(p, s2, 1.0, g), std::invalid_argument);
  s2.fraction = 1.5;
  CHECK_THROWS_AS(private_bound_search(p, s2, 1.0, g), std::invalid_argument);
  auto s3 = s;
  s3.base_half_width = -1.0;
  CHECK_THROWS_AS(private_bound_search(p, s3, 1.0, g), std::invalid_argument);
  auto s4 = s;
  s4.center = std::nan("");
  CHECK_THROWS_AS(private_bound_search(p, s4, 1.0, g), std::invalid_argument);

  CHECK_THROWS_AS(normal_quantile(-0.1), std::invalid_argument);
  CHECK_THROWS_AS(normal_quantile(std::nan("")), std::invalid_argument);
  CHECK(normal_quantile(0.975) == Approx(1.959964));
  CHECK(std::isinf(normal_quantile(0.0)));
}
