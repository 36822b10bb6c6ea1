// The studies of sample-and-aggregate releases on simulated linear regression (privpost/testing/partition_study.hpp;
// partition-release spec A.9 items 5 and 7), about 3 s on 2 threads: not run under the sanitizers (the unit tests of
// mechanisms/sample_aggregate_test.cpp and partition_posterior_test.cpp run the same code there). Properties:
//  1. Sec. 3.1 study, non-private part (n = 10^5, M = 1000, R = 40; spec A.7): the corrected normality combiner is
//     unbiased within 0.02 at every cutoff, the thesis's Eq. 3.10 shows its sign pattern (<= -0.025 at k = -2, >= +0.025
//     at k = +2), the thesis's full g-prior drives every combiner's LM above 0.95 at k = 0, Fisher within 0.04;
//  2. Sec. 4.1 study (n = 10^5, sd 10, M = 100, 20 data sets): the mean of tempered partition quantiles is within 0.1
//     full-posterior sd of the full-data quantile; the bound search over the partition medians stops at half-width 4
//     in 0.76-0.83 of 4000 searches (spec: computed 0.797), at 16 or more in <= 0.09 (0.061), at 4 in >= 0.87 with
//     fraction 0.8 (0.902); a centred search (c = 2, mu = 0.125) cuts the noise scale from 0.178 to a quarter or less;
//  3. the semi-conjugate regression Gibbs sampler (an MCMC partition posterior) passes SBC at 400 trials (KS p > 0.001,
//     50% and 90% coverage within 3.5 binomial sds), and its tempered posterior read as a posterior fails (negative
//     control).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "privpost/diagnostics/calibration.hpp"
#include "privpost/mechanisms/above_threshold.hpp"
#include "privpost/mechanisms/sample_aggregate.hpp"
#include "privpost/samplers/semi_conjugate_regression.hpp"
#include "privpost/testing/partition_study.hpp"

using namespace privpost;

TEST_CASE("Sec. 3.1 study, non-private part (spec A.9 item 5)", "[partition-study]") {
  const partition_regression_design design;  // n = 10^5, M = 1000, y = 1 + 2 x + N(0, 1)
  probability_study_options o;               // R = 40, cutoffs 2 + k 0.00316
  o.threads = 2;
  const auto rows = probability_study(design, o);
  for (const auto& row : rows) {
    INFO(combiner_name(row.combiner) << " k = " << row.offset << ": mean p(b) " << row.mean_exact << ", mean LM "
                                     << row.mean_released << ", signed " << row.mean_signed << ", abs " << row.mean_abs);
    switch (row.combiner) {
      case probability_combiner::normality_corrected:
        CHECK(std::abs(row.mean_signed) <= 0.02);
        break;
      case probability_combiner::normality:
        if (row.offset == -2.0) CHECK(row.mean_signed <= -0.025);
        if (row.offset == 2.0) CHECK(row.mean_signed >= 0.025);
        break;
      case probability_combiner::fisher:
        CHECK(std::abs(row.mean_signed) <= 0.04);
        break;
      case probability_combiner::stouffer_clipped:
        CHECK(std::abs(row.mean_signed) <= 0.02);
        break;
    }
  }
  // The thesis's prior (g = partition size, the full prior in every partition) counts the prior M times: every
  // combiner's LM is near 1 at the true slope, where p(b) is about 0.5.
  o.prior = partition_prior::full;
  for (const auto& row : probability_study(design, o)) {
    if (row.offset != 0.0) continue;
    INFO(combiner_name(row.combiner) << ": mean LM " << row.mean_released << ", mean p(b) " << row.mean_exact);
    CHECK(row.mean_released >= 0.95);
    CHECK(row.mean_exact < 0.7);
  }
}

TEST_CASE("Sec. 4.1 study: tempered quantiles and the bound search (spec A.9 item 7)", "[partition-study]") {
  partition_regression_design design;
  design.partitions = 100;
  design.noise_sd = 10.0;
  quantile_study_options o;
  o.threads = 2;
  const auto sets = quantile_study(design, o);
  // The non-private mean of tempered partition quantiles against the full-data quantile, in full-posterior sds.
  for (std::size_t l = 0; l < o.levels.size(); ++l) {
    double gap = 0.0;
    for (const auto& s : sets) {
      std::size_t fallbacks = 0;
      const auto mean =
          aggregate_partition_quantiles(s.partitions, o.levels.size(), 0.0, std::numeric_limits<double>::infinity(), fallbacks);
      gap += std::abs(mean[l] - s.full[l]) / s.full_sd;
    }
    gap /= static_cast<double>(sets.size());
    INFO("level " << o.levels[l] << ": mean |tempered mean - full quantile| = " << gap << " sd");
    CHECK(gap <= 0.1);
  }
  // The bound search on the partition medians, 200 searches per data set (4000 in all), eps_1 = 0.45, c = 0, mu = 1.
  auto frequencies = [&](double fraction) {
    bound_search_options b;
    b.fraction = fraction;
    b.max_half_width = std::ldexp(1.0, 60);
    std::vector<double> at(70, 0.0);
    std::mt19937_64 g(4000);
    for (const auto& s : sets) {
      std::vector<std::vector<double>> medians;
      for (const auto& q : s.partitions) medians.push_back({q[1]});
      for (int i = 0; i < 200; ++i)
        at[static_cast<std::size_t>(private_bound_search(medians, b, 0.45, g).doublings)] += 1.0 / 4000.0;
    }
    return at;
  };
  const auto f9 = frequencies(0.9);
  double tail = 0.0;
  for (std::size_t t = 4; t < f9.size(); ++t) tail += f9[t];
  INFO("fraction 0.9: t = 2 in " << f9[2] << ", t >= 4 in " << tail);
  CHECK(f9[2] >= 0.76);
  CHECK(f9[2] <= 0.83);
  CHECK(tail <= 0.09);
  const auto f8 = frequencies(0.8);
  INFO("fraction 0.8: t = 2 in " << f8[2]);
  CHECK(f8[2] >= 0.87);
  // The noise of the release at half-width 4 against a centred search: 2 b / (M eps_2), one level.
  std::mt19937_64 g(5);
  std::vector<std::vector<double>> medians;
  for (const auto& q : sets[0].partitions) medians.push_back({q[1]});
  const std::vector<double> median_level = {0.5};
  bound_search_result wide;
  wide.half_width = 4.0;
  wide.budget = {0.45, 0.0};
  CHECK(release_posterior_quantiles(medians, median_level, wide, 0.45, g).noise_scale == Approx(0.178).epsilon(0.01));
  bound_search_options centred;
  centred.center = 2.0;
  centred.base_half_width = 0.125;
  centred.max_half_width = 64.0;
  // The partition medians scatter with the partition posterior's sd (10 / sqrt(1000) = 0.32), so the centred search
  // stops near half-width 1 (I_3 = [1, 3] holds nearly all of them): a quarter of the uncentred noise.
  std::vector<double> half_widths;
  for (int i = 0; i < 200; ++i) half_widths.push_back(private_bound_search(medians, centred, 0.45, g).half_width);
  std::sort(half_widths.begin(), half_widths.end());
  INFO("centred search: median half-width " << half_widths[100] << ", 90th percentile " << half_widths[180]);
  CHECK(half_widths[100] <= 1.0);
  // The noise scale at the first interval's half-width (spec A.9-7: 0.0056, about 0.18 full-posterior sd).
  bound_search_result bounds = wide;
  bounds.half_width = 0.125;
  const auto r = release_posterior_quantiles(medians, median_level, bounds, 0.45, g);
  CHECK(r.noise_scale == Approx(0.0056).epsilon(0.01));
  CHECK(r.budget.epsilon == Approx(0.9));
}

TEST_CASE("semi-conjugate regression Gibbs: calibrated, and the tempered posterior is not (SBC)", "[partition-study]") {
  // theta ~ prior, 20 records, the partition posterior of the slope; 400 trials of 1000 draws. The tempered posterior
  // (likelihood power 2) read as the posterior is too narrow by about sqrt(2): the negative control.
  constexpr int trials = 400;
  const semi_conjugate_regression_prior s{Eigen::Vector2d(0.5, -1.0), Eigen::Matrix2d::Identity(), 3.0, 2.0};
  run_options o;
  o.inference.chains = 1;
  o.inference.burnin = 100;
  o.inference.draws = 1000;
  std::vector<double> ranks, tempered_ranks;
  int covered50 = 0, covered90 = 0, tempered90 = 0;
  for (int t = 0; t < trials; ++t) {
    std::mt19937_64 g = chain_engine(77, t);
    const double sigma2 = draw_inverse_gamma(g, s.a, s.b);
    const Eigen::Vector2d beta(s.mean(0) + draw_normal(g), s.mean(1) + draw_normal(g));
    Eigen::MatrixXd x(20, 2);
    Eigen::VectorXd y(20);
    for (int i = 0; i < 20; ++i) {
      x(i, 0) = 1.0;
      x(i, 1) = draw_normal(g);
      y(i) = x.row(i).dot(beta) + std::sqrt(sigma2) * draw_normal(g);
    }
    const sampler_partition_posterior posterior(semi_conjugate_regression_partitions(x, y, s), o, 1);
    std::vector<std::size_t> all(20);
    std::iota(all.begin(), all.end(), std::size_t{0});
    const Eigen::VectorXd draws = posterior(partition_task{0, all, 1.0, 1.0}, g);
    const Eigen::VectorXd tempered = posterior(partition_task{0, all, 2.0, 1.0}, g);
    const double u = posterior_quantile(beta(1), draws), v = posterior_quantile(beta(1), tempered);
    ranks.push_back(u);
    tempered_ranks.push_back(v);
    covered50 += (u > 0.25 && u < 0.75) ? 1 : 0;
    covered90 += (u > 0.05 && u < 0.95) ? 1 : 0;
    tempered90 += (v > 0.05 && v < 0.95) ? 1 : 0;
  }
  // The library's rule (tests/support/calibration_checks.hpp): KS p > 0.001 and coverage within 3.5 binomial sds.
  const auto ks = ks_uniform(ranks);
  INFO("KS p = " << ks.p_value << ", coverage 50% " << covered50 / double(trials) << ", 90% " << covered90 / double(trials)
                 << "; tempered 90% " << tempered90 / double(trials));
  CHECK(ks.p_value > 1e-3);
  CHECK(std::abs(covered50 / double(trials) - 0.5) <= 3.5 * std::sqrt(0.25 / trials));
  CHECK(std::abs(covered90 / double(trials) - 0.9) <= 3.5 * std::sqrt(0.09 / trials));
  CHECK(tempered90 / double(trials) < 0.9 - 3.5 * std::sqrt(0.09 / trials));
  CHECK(ks_uniform(tempered_ranks).p_value < 1e-3);
}
