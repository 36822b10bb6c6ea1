// privpost/inference/synthetic.hpp
// Private synthetic data from the noise-aware posterior predictive, and valid inference from it.
//
// Given a release z, m synthetic data sets are drawn as theta_l ~ p(theta | z) (m posterior draws spread over the
// chains), then records x_l1..x_lN ~ f(x | theta_l). This is post-processing of the release: no further privacy cost.
// An analyst fits the same estimator to every set (estimate q_l, its usual variance u_l) and combines them with the
// rules for fully synthetic data (Raghunathan, Reiter & Rubin 2003):
//     q_m = mean of q_l,  b_m = sample variance of q_l,  u_m = mean of u_l,
//     T_f = (1 + 1/m) b_m - u_m,   nu_f = (m - 1) (1 - u_m / ((1 + 1/m) b_m))^2,
// and the interval q_m +- t_{nu_f} sqrt(T_f). Why it is valid here: b_m estimates Var(theta | z) + u (a posterior
// draw's spread plus the estimator's sampling noise on N records), so T_f estimates Var(theta | z) + b/m, the variance
// of q_m around the parameter given the release. A single synthetic set analysed as if it were real, q_1 +- z sqrt(u_1),
// ignores Var(theta | z) twice (the set's theta_1 is itself a posterior draw) and under-covers: at n = N with weak
// noise its nominal 90% interval covers about 66% (tests/inference/synthetic_test.cpp).
//
// T_f can be negative in a finite sample (b_m small against u_m); then the conservative replacement of Reiter (2002),
// T* = (N / n) u_m (N synthetic records a set, n original records), is used with a normal reference distribution, and
// the result says so.
//
//     const auto thetas = synthetic_parameter_draws(result.draws, 20);            // 20 posterior draws, spread
//     for (const auto& t : thetas) sets.push_back(synthetic_family_records<binomial_family>(t, n, g));
//     const auto c = combine_fully_synthetic(estimates, variances, n, n);         // q_l, u_l fitted per set
//     const interval ci = c.central_interval(0.9);
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/interval.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/inference/posterior.hpp"

namespace privpost {

/// The fully synthetic combination of m per-set estimates of one scalar estimand.
struct synthetic_combination {
  int sets = 0;                     ///< m
  double estimate = 0.0;            ///< q_m, the mean of the per-set estimates
  double within = 0.0;              ///< u_m, the mean of the per-set variances
  double between = 0.0;             ///< b_m, the sample variance of the per-set estimates
  double variance = 0.0;            ///< T_f, or the fallback (N / n) u_m when T_f < 0
  double degrees_of_freedom = 0.0;  ///< nu_f; infinity (normal reference) with the fallback
  bool fallback = false;            ///< whether T_f was negative and replaced

  /// The central interval at `level` in (0, 1): estimate +- t_{nu, (1 + level) / 2} sqrt(variance).
  interval central_interval(double level) const {
    if (!(level > 0.0 && level < 1.0)) throw_invalid("synthetic_combination::central_interval", "level", level, "(0, 1)");
    if (variance == 0.0) return interval(estimate, estimate);
    const double p = 0.5 * (1.0 + level);
    // nu_f near 0 (T_f barely above 0 against b_m) makes the t quantile overflow: the interval is then unbounded.
    using unbounded = boost::math::policies::policy<boost::math::policies::overflow_error<boost::math::policies::ignore_error>>;
    double z = std::numeric_limits<double>::infinity();
    if (std::isinf(degrees_of_freedom))
      z = boost::math::quantile(boost::math::normal_distribution<double>(), p);
    else if (degrees_of_freedom > 0.0)
      z = boost::math::quantile(boost::math::students_t_distribution<double, unbounded>(degrees_of_freedom), p);
    const double half = z * std::sqrt(variance);
    return interval(estimate - half, estimate + half);
  }
};

/// Combines m >= 2 per-set estimates and their variances (finite, variances >= 0) from synthetic sets of
/// `synthetic_records` records each, drawn for a release of `original_records` records (both > 0, for the fallback).
/// std::invalid_argument naming the bad value otherwise.
inline synthetic_combination combine_fully_synthetic(std::span<const double> estimates, std::span<const double> variances,
                                                     double synthetic_records, double original_records) {
  constexpr const char* who = "combine_fully_synthetic";
  if (estimates.size() < 2)
    throw_invalid(who, "synthetic sets", static_cast<double>(estimates.size()),
                  "at least 2 (the between-set variance needs two sets)");
  if (estimates.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw_invalid(who, "synthetic sets", static_cast<double>(estimates.size()), "at most 2^31 - 1");
  check_size_match(who, "variances", static_cast<std::int64_t>(variances.size()), "estimates",
                   static_cast<std::int64_t>(estimates.size()));
  check_positive_finite(who, "synthetic_records", synthetic_records);
  check_positive_finite(who, "original_records", original_records);
  const auto m = static_cast<double>(estimates.size());
  double mean = 0.0, within = 0.0;
  for (std::size_t l = 0; l < estimates.size(); ++l) {
    if (!std::isfinite(estimates[l])) throw_invalid(who, "estimate " + std::to_string(l + 1), estimates[l], "a finite number");
    if (!(std::isfinite(variances[l]) && variances[l] >= 0.0))
      throw_invalid(who, "variance " + std::to_string(l + 1), variances[l], "a finite number >= 0");
    mean += estimates[l];
    within += variances[l];
  }
  mean /= m;
  within /= m;
  double between = 0.0;
  for (double q : estimates) between += (q - mean) * (q - mean);
  between /= m - 1.0;

  synthetic_combination c;
  c.sets = static_cast<int>(estimates.size());
  c.estimate = mean;
  c.within = within;
  c.between = between;
  const double inflated = (1.0 + 1.0 / m) * between;
  c.variance = inflated - within;
  if (c.variance < 0.0) {
    c.fallback = true;
    c.variance = synthetic_records / original_records * within;
    c.degrees_of_freedom = std::numeric_limits<double>::infinity();
  } else if (inflated == 0.0) {  // every set gave the same estimate with zero variance: a point, m - 1 df
    c.degrees_of_freedom = m - 1.0;
  } else {
    const double r = 1.0 - within / inflated;
    c.degrees_of_freedom = (m - 1.0) * r * r;
  }
  return c;
}

/// m posterior draws (parameter vectors) spread over all chains: with the chains' draws concatenated (N in all), draw
/// floor((k + 1/2) N / m) for k = 0..m-1, so that each chain gives its share and draws far apart in a chain stand for
/// nearly independent ones. std::invalid_argument unless 1 <= m <= N.
inline std::vector<Eigen::VectorXd> synthetic_parameter_draws(const posterior& draws, int sets) {
  const auto total = static_cast<std::int64_t>(draws.size());
  if (sets < 1 || sets > total)
    throw_invalid("synthetic_parameter_draws", "sets", static_cast<double>(sets),
                  "an integer in [1, " + std::to_string(total) + "] (the posterior draws)");
  std::vector<Eigen::VectorXd> out;
  out.reserve(static_cast<std::size_t>(sets));
  const std::int64_t per_chain = draws.draws_per_chain();
  for (std::int64_t k = 0; k < sets; ++k) {
    const auto at = static_cast<std::int64_t>((static_cast<double>(k) + 0.5) * static_cast<double>(total) / sets);
    out.push_back(draws.chains()[static_cast<std::size_t>(at / per_chain)].row(at % per_chain).transpose());
  }
  return out;
}

/// A family whose parameter can be rebuilt from its parameter vector: a number, or F::from_vector.
template <class F>
concept family_from_vector = record_generating_family<F> &&
    (std::is_arithmetic_v<typename F::parameter_type> || requires(const Eigen::VectorXd& v) {
      { F::from_vector(v) } -> std::convertible_to<typename F::parameter_type>;
    });

namespace detail {
inline void check_synthetic_records(const char* who, std::int64_t records) {
  if (records < 1 || records > 1'000'000'000)
    throw_invalid(who, "records", static_cast<double>(records), "an integer in [1, 1e9]");
}
}  // namespace detail

/// `records` synthetic records of family F at the parameter `theta` (rebuilt from a posterior draw): F::draw_record
/// each. The overload for families whose parameter vector does not determine the parameter (normal_known_variance:
/// the sd is the model's). std::invalid_argument unless 1 <= records <= 1e9.
template <record_generating_family F, random_engine G>
std::vector<typename F::record_type> synthetic_family_records(const typename F::parameter_type& theta, std::int64_t records,
                                                              G& g) {
  detail::check_synthetic_records("synthetic_family_records", records);
  std::vector<typename F::record_type> out(static_cast<std::size_t>(records));
  for (auto& x : out) x = F::draw_record(theta, g);
  return out;
}

/// `records` synthetic records of family F at the parameter vector `theta` (a posterior draw): the parameter is the
/// number itself or F::from_vector(theta). std::invalid_argument unless 1 <= records <= 1e9 and theta has
/// F::parameter_dimension finite entries.
template <family_from_vector F, random_engine G>
std::vector<typename F::record_type> synthetic_family_records(const Eigen::VectorXd& theta, std::int64_t records, G& g) {
  constexpr const char* who = "synthetic_family_records";
  detail::check_synthetic_records(who, records);
  check_size_match(who, "theta", theta.size(), "the family's parameter dimension", F::parameter_dimension);
  check_finite(who, "theta", theta);
  if constexpr (std::is_arithmetic_v<typename F::parameter_type>)
    return synthetic_family_records<F>(static_cast<typename F::parameter_type>(theta(0)), records, g);
  else
    return synthetic_family_records<F>(typename F::parameter_type(F::from_vector(theta)), records, g);
}

/// `records` synthetic records of a contingency table from one draw of its cell probabilities (the histogram
/// posterior's parameter vector, samplers/record_histogram.hpp): cells row-major over the columns' levels (the last
/// column varies fastest, as marginal_queries lays them out), levels[a] >= 1 levels of column a. Returns a records x
/// columns matrix of level indices (0-based). The cell of a record is found by binary search of the cumulative
/// probabilities: log2(D) comparisons. std::invalid_argument on a probability that is negative or not finite,
/// probabilities that do not sum to 1 (within 1e-6), a size other than the product of the levels, or a record count
/// outside [1, 1e9].
template <random_engine G>
Eigen::Matrix<std::int32_t, Eigen::Dynamic, Eigen::Dynamic> synthetic_table_records(const Eigen::VectorXd& probabilities,
                                                                                    const std::vector<std::size_t>& levels,
                                                                                    std::int64_t records, G& g) {
  constexpr const char* who = "synthetic_table_records";
  detail::check_synthetic_records(who, records);
  if (levels.empty()) throw std::invalid_argument(std::string(who) + ": no column; accepted: at least one");
  double cells = 1.0;
  for (std::size_t a = 0; a < levels.size(); ++a) {
    if (levels[a] < 1 || levels[a] > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
      throw_invalid(who, "levels of column " + std::to_string(a + 1), static_cast<double>(levels[a]), "an integer >= 1");
    cells *= static_cast<double>(levels[a]);
  }
  if (cells != static_cast<double>(probabilities.size()))
    throw_invalid(who, "cell probabilities", static_cast<double>(probabilities.size()),
                  "the product of the levels, " + std::to_string(static_cast<long long>(cells)));
  std::vector<double> cumulative(static_cast<std::size_t>(probabilities.size()));
  double sum = 0.0;
  for (Eigen::Index c = 0; c < probabilities.size(); ++c) {
    if (!(std::isfinite(probabilities(c)) && probabilities(c) >= 0.0))
      throw_invalid(who, "probability of cell " + std::to_string(c), probabilities(c), "a finite number >= 0");
    sum += probabilities(c);
    cumulative[static_cast<std::size_t>(c)] = sum;
  }
  if (!(std::abs(sum - 1.0) <= 1e-6)) throw_invalid(who, "sum of the cell probabilities", sum, "1 (within 1e-6)");
  const auto columns = static_cast<Eigen::Index>(levels.size());
  Eigen::Matrix<std::int32_t, Eigen::Dynamic, Eigen::Dynamic> out(records, columns);
  for (std::int64_t r = 0; r < records; ++r) {
    // u uniform on (0, sum): the first cell whose cumulative probability exceeds it; a zero-probability cell is never
    // chosen (its cumulative equals its predecessor's).
    const double u = draw_uniform(g) * sum;
    auto cell = static_cast<std::size_t>(std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin());
    if (cell == cumulative.size()) --cell;  // u within rounding of sum
    for (Eigen::Index a = columns; a-- > 0;) {
      const std::size_t l = levels[static_cast<std::size_t>(a)];
      out(r, a) = static_cast<std::int32_t>(cell % l);
      cell /= l;
    }
  }
  return out;
}

}  // namespace privpost
