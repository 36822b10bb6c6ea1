// privpost/mechanisms/factored_exponential.hpp
// The factored exponential mechanism (Williams & McSherry 2010, Sec. 3; docs/histogram-measurements.md B.2, B.8.2):
// a candidate z of a finite set Z is released with probability softmax_z(kappa u(X)), where u_z(X) = sum_i l(z, x_i)
// sums a per-record score clamped to a declared interval [lo, hi]. Under substitution of one record every u_z moves
// by at most Delta_u = hi - lo, so the numerator and the normaliser each move by at most e^{kappa Delta_u}: with
// kappa = epsilon / (2 Delta_u) the release is epsilon-DP. (The paper's "epsilon" is kappa here, and it counts
// add/remove neighbours.) u is record-additive, so the record-level sampler (samplers/record_fem.hpp) conditions on a
// release exactly, and the W&M bounds (mechanisms/fem_bounds.hpp, samplers/fem_bound_sampler.hpp) give a cheap approximation of
// its likelihood.
//
// The score is evaluated in floating point, and the release draws the Gumbel-max of kappa u_z + G_z in floating point:
// like every floating-point exponential mechanism it does not realise the stated distribution exactly (e.g. Ilvento
// 2020), so the guarantee is epsilon-DP of the ideal mechanism, not of its rounding.
//
//     // The coin of W&M Sec. 3.2: candidates 0.1 .. 0.9, the likelihood's log rescaled into [-1, 0] (spec B.5).
//     auto score = [](std::size_t z, const double& x) { const double p = 0.1 * (z + 1); return std::log(x ? p : 1 - p) /
//     std::log(10.0); }; const factored_exponential_mechanism<double, decltype(score)> m(9, score, {-1.0, 0.0}, 0.2);  // kappa =
//     0.1 const std::size_t z = m.release(records);  // OS CSPRNG
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <utility>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/interval.hpp"
#include "privpost/core/math/log_sum_exp.hpp"
#include "privpost/core/random/os_random_engine.hpp"
#include "privpost/core/random/uniform.hpp"

namespace privpost {

/// A per-record score of a candidate: score(candidate index, record) -> double.
template <class S, class Record>
concept candidate_score = std::invocable<const S&, std::size_t, const Record&> &&
                          std::convertible_to < std::invoke_result_t<const S&, std::size_t, const Record&>,
double > ;

/// The factored exponential mechanism over `candidates` outputs with per-record score `Score`, clamped to a declared
/// interval (spec B.8.2). Its release is an index in [0, candidates).
template <class Record, candidate_score<Record> Score>
class factored_exponential_mechanism {
 public:
  /// The most candidates (each record's contribution is a vector of this length).
  static constexpr std::size_t max_candidates = std::size_t{1} << 24;

  /// candidates in [2, 2^24]; score_range [lo, hi] finite with hi > lo (what the data owner declares the score to lie
  /// in: scores outside are clamped into it, NaN scores count as lo); epsilon finite and >= 2^-50. kappa =
  /// epsilon / (2 (hi - lo)). std::invalid_argument otherwise.
  factored_exponential_mechanism(std::size_t candidates, Score score, interval score_range, double epsilon)
      : candidates_(candidates), score_(std::move(score)), range_(score_range), epsilon_(epsilon) {
    constexpr const char* who = "factored_exponential_mechanism";
    if (candidates < 2 || candidates > max_candidates)
      throw_invalid(who, "candidates", static_cast<double>(candidates), "an integer in [2, 2^24]");
    if (!(std::isfinite(range_.lo) && std::isfinite(range_.hi) && range_.hi > range_.lo))
      throw_invalid(who, "score range width", range_.hi - range_.lo, "a finite interval with hi > lo");
    check_epsilon(who, epsilon);
    kappa_ = epsilon / (2.0 * (range_.hi - range_.lo));
  }

  /// The number of candidates |Z|.
  std::size_t candidates() const noexcept { return candidates_; }
  /// kappa = epsilon / (2 Delta_u): the exponent of the softmax.
  double exponent() const noexcept { return kappa_; }
  /// The declared score interval.
  const interval& score_range() const noexcept { return range_; }
  /// The privacy cost of one release: (epsilon, 0).
  privacy_budget budget() const noexcept { return {epsilon_, 0.0}; }

  /// l(z, x) for candidate z: the score clamped to the declared interval (NaN -> lo).
  double score(std::size_t z, const Record& x) const {
    const double s = static_cast<double>(score_(z, x));
    return std::isnan(s) ? range_.lo : std::clamp(s, range_.lo, range_.hi);
  }

  /// l(., x): the record's contribution to u, one entry per candidate.
  Eigen::VectorXd contribution(const Record& x) const {
    Eigen::VectorXd c(static_cast<Eigen::Index>(candidates_));
    contribution(x, c);
    return c;
  }
  /// l(., x) into out (resized only if it has another length).
  void contribution(const Record& x, Eigen::VectorXd& out) const {
    if (out.size() != static_cast<Eigen::Index>(candidates_)) out.resize(static_cast<Eigen::Index>(candidates_));
    for (std::size_t z = 0; z < candidates_; ++z) out(static_cast<Eigen::Index>(z)) = score(z, x);
  }

  /// u(X) = sum_i l(., x_i).
  Eigen::VectorXd scores(std::span<const Record> records) const {
    Eigen::VectorXd u = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(candidates_));
    for (const Record& x : records)
      for (std::size_t z = 0; z < candidates_; ++z) u(static_cast<Eigen::Index>(z)) += score(z, x);
    return u;
  }

  /// log p(z | u) = kappa u_z - log sum_z' exp(kappa u_z'). std::invalid_argument for z outside [0, |Z|) or a u of
  /// another length or with a non-finite entry.
  double log_likelihood(std::size_t z, const Eigen::VectorXd& u) const {
    check_release("factored_exponential_mechanism::log_likelihood", z);
    check_size_match("factored_exponential_mechanism::log_likelihood", "u", u.size(), "candidates",
                     static_cast<std::int64_t>(candidates_));
    check_finite("factored_exponential_mechanism::log_likelihood", "u", u);
    return kappa_ * u(static_cast<Eigen::Index>(z)) - detail::log_sum_exp(kappa_ * u);
  }

  /// The release: the Gumbel-max argmax_z kappa u_z + G_z (G_z standard Gumbel from g), which is softmax_z(kappa u)
  /// distributed. Noise from g: tests and simulation studies.
  template <random_engine G>
  std::size_t release(std::span<const Record> records, G& g) const {
    const Eigen::VectorXd u = scores(records);
    std::size_t best = 0;
    double best_value = -std::numeric_limits<double>::infinity();
    for (std::size_t z = 0; z < candidates_; ++z) {
      const double v = kappa_ * u(static_cast<Eigen::Index>(z)) - std::log(-std::log(draw_uniform(g)));
      if (v > best_value) {
        best_value = v;
        best = z;
      }
    }
    return best;
  }
  /// The release with noise from the operating system's CSPRNG: the default for a real release.
  std::size_t release(std::span<const Record> records) const {
    os_random_engine g;
    return release(records, g);
  }

  /// std::invalid_argument unless z is a candidate index.
  void check_release(const char* who, std::size_t z) const {
    if (z >= candidates_)
      throw_invalid(who, "z", static_cast<double>(z), "a candidate index in [0, " + std::to_string(candidates_ - 1) + "]");
  }

 private:
  std::size_t candidates_;
  Score score_;
  interval range_;
  double epsilon_;
  double kappa_ = 0.0;
};

}  // namespace privpost
