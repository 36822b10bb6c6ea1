// privpost/testing/partition_study.hpp
// The studies of sample-and-aggregate releases on simulated linear regression (Amitai 2018 Sec. 3.1 and 4.1; the
// partition-release spec A.7 and A.9 items 5-8): released probabilities and quantiles against the full-data posterior.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "privpost/core/errors.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/families/regression/coefficient_posterior.hpp"
#include "privpost/inference/infer.hpp"
#include "privpost/inference/partition_posterior.hpp"
#include "privpost/mechanisms/above_threshold.hpp"
#include "privpost/mechanisms/partition_plan.hpp"
#include "privpost/mechanisms/sample_aggregate.hpp"

namespace privpost {

/// Simulated data of the thesis's experiments: x ~ N(0, 1) (spec A.6-1), y = intercept + slope x + N(0, noise_sd^2),
/// covariates [1, x]; the slope (coefficient 1) is the target, sigma^2 = noise_sd^2 is known.
struct partition_regression_design {
  /// Records n.
  std::size_t n = 100000;
  /// Partitions M.
  std::size_t partitions = 1000;
  /// Intercept of the simulated data.
  double intercept = 1.0;
  /// Slope of the simulated data.
  double slope = 2.0;
  /// Standard deviation of the errors (known to the posterior).
  double noise_sd = 1.0;
};

/// One simulated data set: n x 2 covariates [1, x] and n responses.
struct partition_regression_data {
  /// Covariates.
  Eigen::MatrixXd x;
  /// Responses.
  Eigen::VectorXd y;
};

/// Draws a data set of the design (std::invalid_argument for n < 2 or a noise_sd that is not finite and > 0).
template <random_engine G>
partition_regression_data simulate_partition_regression(const partition_regression_design& d, G& g) {
  if (d.n < 2) throw_invalid("simulate_partition_regression", "n", static_cast<double>(d.n), "an integer >= 2");
  check_positive_finite("simulate_partition_regression", "noise_sd", d.noise_sd);
  partition_regression_data data{Eigen::MatrixXd(static_cast<Eigen::Index>(d.n), 2),
                                 Eigen::VectorXd(static_cast<Eigen::Index>(d.n))};
  for (Eigen::Index i = 0; i < data.x.rows(); ++i) {
    const double x = draw_normal(g);
    data.x(i, 0) = 1.0;
    data.x(i, 1) = x;
    data.y(i) = d.intercept + d.slope * x + d.noise_sd * draw_normal(g);
  }
  return data;
}

/// The full-data posterior of the slope under Zellner's g-prior with g = n (mean 0, known variance): the target p(b)
/// of the thesis's evaluation (Eq. 3.11).
inline scalar_marginal full_slope_posterior(const partition_regression_data& data, const partition_regression_design& d) {
  regression_partition_prior prior{Eigen::VectorXd::Zero(2), Eigen::MatrixXd(), static_cast<double>(d.n), 1.0, 1.0,
                                   d.noise_sd * d.noise_sd};
  const regression_coefficient_posterior posterior(data.x, data.y, prior, 1);
  std::vector<std::size_t> all(d.n);
  std::iota(all.begin(), all.end(), std::size_t{0});
  std::mt19937_64 unused(0);
  return posterior(partition_task{0, all, 1.0, 1.0}, unused);
}

/// The settings of the probability study (A.9 items 5 and 6).
struct probability_study_options {
  /// Cutoffs b = center + k step for k in offsets (fixed, not data-dependent).
  std::vector<double> offsets = {-2.0, -1.0, 0.0, 1.0, 2.0};
  /// Centre of the cutoffs (the true slope).
  double center = 2.0;
  /// Step of the cutoffs, about one full-posterior sd at n = 10^5.
  double step = 0.00316;
  /// Simulated data sets.
  int datasets = 40;
  /// Seed: data set r uses chain_engine(seed, r) for its data, plan and noise.
  std::uint64_t seed = 2024;
  /// Budget of each release (all cutoffs together); 0: no noise (the non-private aggregate).
  double epsilon = 0.0;
  /// fractional: Zellner's g = n / M per partition raised to 1/M (that is g = n); full: g = n / M (the thesis).
  partition_prior prior = partition_prior::fractional;
  /// Threads for the partitions.
  int threads = 1;
};

/// One row of the probability study: a combiner at one cutoff, averaged over the data sets.
struct probability_study_row {
  /// The combiner.
  probability_combiner combiner{};
  /// The cutoff's offset k (b = center + k step).
  double offset = 0.0;
  /// Mean of the full-data p(b).
  double mean_exact = 0.0;
  /// Mean of the released (or non-private) probability LM.
  double mean_released = 0.0;
  /// Mean of p(b) - LM (Eq. 3.13).
  double mean_signed = 0.0;
  /// Mean of |p(b) - LM|.
  double mean_abs = 0.0;
  /// Fraction of LM in {0, 1} (a clamped aggregate or a saturated map).
  double saturated = 0.0;
};

/// Runs the probability study: every combiner on the same partition outputs of every data set.
inline std::vector<probability_study_row> probability_study(const partition_regression_design& d,
                                                            const probability_study_options& o) {
  if (o.datasets < 1) throw_invalid("probability_study", "datasets", o.datasets, "an integer >= 1");
  const probability_combiner combiners[] = {probability_combiner::normality, probability_combiner::normality_corrected,
                                            probability_combiner::fisher, probability_combiner::stouffer_clipped};
  std::vector<double> cutoffs;
  for (double k : o.offsets) cutoffs.push_back(o.center + k * o.step);
  const std::size_t kk = cutoffs.size();
  std::vector<probability_study_row> rows;
  for (auto c : combiners)
    for (double k : o.offsets) rows.push_back({c, k});
  const regression_partition_prior prior{
      Eigen::VectorXd::Zero(2), Eigen::MatrixXd(), static_cast<double>(d.n) / static_cast<double>(d.partitions), 1.0, 1.0,
      d.noise_sd * d.noise_sd};
  for (int r = 0; r < o.datasets; ++r) {
    std::mt19937_64 g = chain_engine(o.seed, r);
    const auto data = simulate_partition_regression(d, g);
    const auto full = full_slope_posterior(data, d);
    const partition_plan plan(d.n, d.partitions, g);
    const regression_coefficient_posterior posterior(data.x, data.y, prior, 1);
    const auto outputs = partition_cdf(plan, posterior, cutoffs, {o.seed, o.threads}, o.prior);
    for (std::size_t ci = 0; ci < 4; ++ci) {
      probability_release_options ro;
      ro.combiner = combiners[ci];
      ro.epsilon = o.epsilon;
      std::vector<double> released(kk);
      if (o.epsilon > 0.0) {
        released = release_posterior_probabilities(outputs.values, cutoffs, ro, g).probability;
      } else {
        std::size_t fallbacks = 0;
        const auto a = aggregate_partition_probabilities(outputs.values, kk, ro, fallbacks);
        for (std::size_t k = 0; k < kk; ++k) released[k] = combined_probability(ro, d.partitions, a[k]);
      }
      for (std::size_t k = 0; k < kk; ++k) {
        auto& row = rows[ci * kk + k];
        const double exact = cdf(full, cutoffs[k]);
        row.mean_exact += exact;
        row.mean_released += released[k];
        row.mean_signed += exact - released[k];
        row.mean_abs += std::abs(exact - released[k]);
        row.saturated += (released[k] == 0.0 || released[k] == 1.0) ? 1.0 : 0.0;
      }
    }
  }
  for (auto& row : rows) {
    const double m = static_cast<double>(o.datasets);
    row.mean_exact /= m;
    row.mean_released /= m;
    row.mean_signed /= m;
    row.mean_abs /= m;
    row.saturated /= m;
  }
  return rows;
}

/// The settings of the quantile study (A.9 item 7): the Sec. 4.1 design with known variance.
struct quantile_study_options {
  /// Levels of the released quantiles.
  std::vector<double> levels = {0.025, 0.5, 0.975};
  /// Simulated data sets.
  int datasets = 20;
  /// Seed: data set r uses chain_engine(seed, r).
  std::uint64_t seed = 2018;
  /// Threads for the partitions.
  int threads = 1;
};

/// One data set of the quantile study: the full-data quantiles, the partitions' tempered quantiles and the full
/// posterior's sd.
struct quantile_study_dataset {
  /// Full-data quantiles of the slope at the levels.
  std::vector<double> full;
  /// Partition j's tempered quantiles at the levels (Eq. 4.2).
  std::vector<std::vector<double>> partitions;
  /// The full posterior's sd of the slope.
  double full_sd = 0.0;
};

/// Simulates the data sets of the quantile study and computes the tempered partition quantiles (likelihood power
/// n / n_j, the prior once) and the full-data quantiles.
inline std::vector<quantile_study_dataset> quantile_study(const partition_regression_design& d, const quantile_study_options& o) {
  if (o.datasets < 1) throw_invalid("quantile_study", "datasets", o.datasets, "an integer >= 1");
  // The prior counts once in a tempered posterior: Zellner's g-prior X_j^T X_j / n_j on partition j is the full
  // data's X^T X / n in expectation.
  const regression_partition_prior prior{
      Eigen::VectorXd::Zero(2), Eigen::MatrixXd(), static_cast<double>(d.n) / static_cast<double>(d.partitions), 1.0, 1.0,
      d.noise_sd * d.noise_sd};
  std::vector<quantile_study_dataset> out;
  for (int r = 0; r < o.datasets; ++r) {
    std::mt19937_64 g = chain_engine(o.seed, r);
    const auto data = simulate_partition_regression(d, g);
    const auto full = full_slope_posterior(data, d);
    quantile_study_dataset s;
    for (double p : o.levels) s.full.push_back(quantile(full, p));
    s.full_sd = full.scale;
    const partition_plan plan(d.n, d.partitions, g);
    const regression_coefficient_posterior posterior(data.x, data.y, prior, 1);
    s.partitions = partition_quantiles(plan, posterior, o.levels, {o.seed, o.threads}).values;
    out.push_back(std::move(s));
  }
  return out;
}

/// The settings of the reliability study (A.9 item 8): the slope drawn from its prior, a release of
/// Pr(slope <= prior median), and the frequency of slope <= median among trials whose released value fell in each bin.
struct reliability_study_options {
  /// Trials.
  int trials = 1000;
  /// Seed: trial t uses chain_engine(seed, t).
  std::uint64_t seed = 8;
  /// Budget of each release; 0: no noise.
  double epsilon = 1.0;
  /// The combiner of the releases.
  probability_combiner combiner = probability_combiner::normality_corrected;
  /// The prior sd of the intercept and the slope, in units of noise_sd / sqrt(n) (a few full-posterior sds, so that
  /// Pr(slope <= median | D) spreads over (0, 1)).
  double prior_sd = 2.0;
  /// Bins of the released probability (equal widths on [0, 1]).
  int bins = 10;
  /// Threads for the partitions.
  int threads = 1;
};

/// One bin of the reliability table.
struct reliability_bin {
  /// The bin's lower end (released probability).
  double lower = 0.0;
  /// The bin's upper end.
  double upper = 0.0;
  /// Trials whose released probability fell in the bin.
  int trials = 0;
  /// Their mean released probability.
  double mean_released = 0.0;
  /// The fraction of them whose true slope was <= the cutoff (equal to the bin's probabilities when calibrated).
  double frequency = 0.0;
  /// Their mean full-data p(b) (what the release approximates).
  double mean_exact = 0.0;
};

/// Runs the reliability study: intercept and slope ~ N((intercept, slope), (prior_sd noise_sd / sqrt(n))^2 I), data,
/// partition posteriors under that prior (fractional), a release of Pr(slope <= slope) at the prior median.
inline std::vector<reliability_bin> reliability_study(const partition_regression_design& d, const reliability_study_options& o) {
  if (o.trials < 1) throw_invalid("reliability_study", "trials", o.trials, "an integer >= 1");
  if (o.bins < 1 || o.bins > 1000) throw_invalid("reliability_study", "bins", o.bins, "an integer in [1, 1000]");
  check_positive_finite("reliability_study", "prior_sd", o.prior_sd);
  const double tau = o.prior_sd * d.noise_sd / std::sqrt(static_cast<double>(d.n));
  const Eigen::Vector2d mean(d.intercept, d.slope);
  // beta | sigma^2 ~ N(mean, sigma^2 Lambda_0^{-1}) with sigma^2 Lambda_0^{-1} = tau^2 I.
  const regression_partition_prior prior{
      mean, Eigen::Matrix2d::Identity() * (d.noise_sd * d.noise_sd / (tau * tau)), 0.0, 1.0, 1.0, d.noise_sd * d.noise_sd};
  const std::vector<double> cutoff = {d.slope};
  std::vector<reliability_bin> bins(static_cast<std::size_t>(o.bins));
  for (int b = 0; b < o.bins; ++b) {
    bins[static_cast<std::size_t>(b)].lower = static_cast<double>(b) / o.bins;
    bins[static_cast<std::size_t>(b)].upper = static_cast<double>(b + 1) / o.bins;
  }
  for (int t = 0; t < o.trials; ++t) {
    std::mt19937_64 g = chain_engine(o.seed, t);
    partition_regression_design trial = d;
    trial.intercept = d.intercept + tau * draw_normal(g);
    trial.slope = d.slope + tau * draw_normal(g);
    const auto data = simulate_partition_regression(trial, g);
    const partition_plan plan(d.n, d.partitions, g);
    const regression_coefficient_posterior posterior(data.x, data.y, prior, 1);
    const auto outputs = partition_cdf(plan, posterior, cutoff, {o.seed, o.threads});
    probability_release_options ro;
    ro.combiner = o.combiner;
    ro.epsilon = o.epsilon;
    double released = 0.0;
    if (o.epsilon > 0.0) {
      released = release_posterior_probabilities(outputs.values, cutoff, ro, g).probability[0];
    } else {
      std::size_t fallbacks = 0;
      released = combined_probability(ro, d.partitions, aggregate_partition_probabilities(outputs.values, 1, ro, fallbacks)[0]);
    }
    std::vector<std::size_t> all(d.n);
    std::iota(all.begin(), all.end(), std::size_t{0});
    const double exact = cdf(posterior(partition_task{0, all, 1.0, 1.0}, g), d.slope);
    auto& bin = bins[std::min(static_cast<std::size_t>(released * o.bins), static_cast<std::size_t>(o.bins - 1))];
    ++bin.trials;
    bin.mean_released += released;
    bin.frequency += trial.slope <= d.slope ? 1.0 : 0.0;
    bin.mean_exact += exact;
  }
  for (auto& bin : bins)
    if (bin.trials > 0) {
      bin.mean_released /= bin.trials;
      bin.frequency /= bin.trials;
      bin.mean_exact /= bin.trials;
    }
  return bins;
}

}  // namespace privpost
