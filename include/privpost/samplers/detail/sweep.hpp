// privpost/samplers/detail/sweep.hpp
// The pieces every Gibbs-SS sweep shares (dissertation Algorithm 3; 001 Algorithm 1): release checks, the draw of s on
// the model's valid set (exact truncated normal in one dimension, bounded retries then a counted projection otherwise),
// the collapsed likelihood and acceptance rule of the prior-proposal moves, and the redraw of the mechanism's noise
// variances. Private to samplers/.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/truncated_normal.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/mechanisms/reachable.hpp"

namespace privpost::detail {

// A release z of n records for a statistic of `size` entries: sizes agree, every entry finite, n finite and > 0.
inline void check_release(const char* who, const Eigen::VectorXd& z, Eigen::Index size, double n) {
  check_size_match(who, "release z", z.size(), "model statistic size", size);
  check_finite(who, "z", z);
  check_record_count(who, n);
}

// n for the samplers of one integer sum (exact, window, corrected): a whole number in [1, n_max]; `accepted` says so in
// the error (n itself is checked by check_release first).
inline void check_whole_record_count(const char* who, double n, double n_max, const char* accepted) {
  if (!(std::floor(n) == n && n <= n_max)) throw_invalid(who, "n", n, accepted);
}

// The last point `upper` of an integer sum's finite support {0, ..., upper}: a whole number with at most `cap` points
// (beyond it enumeration is the wrong tool); `accepted` says so in the error.
inline double checked_support_upper(const char* who, double upper, double cap, const char* accepted) {
  if (!(upper >= 0.0 && upper + 1.0 <= cap && std::floor(upper) == upper))
    throw_invalid(who, "support size sum_upper(n) + 1", upper + 1.0, accepted);
  return upper;
}

// The one rule of mechanisms/reachable.hpp for each coordinate of z, given the range [lo, hi] of the exact sum of n
// records (the same for every coordinate; an infinite end bounds nothing on its side).
template <class Mechanism>
void check_reachable_release(const char* who, const Mechanism& mechanism, const Eigen::VectorXd& z, double n, double lo,
                             double hi) {
  const double scale = noise_scale(mechanism);
  for (Eigen::Index j = 0; j < z.size(); ++j)
    check_reachable(who, z.size() == 1 ? std::string("z") : "z(" + std::to_string(j) + ")", z(j), lo, hi, n, scale);
}

// The rule for a model whose support bounds every coordinate of the sum by [lower(n), upper(n)] (interval_support);
// nothing for a support without coordinate bounds (the regression and graphical models: their tools check the
// declared box instead).
template <class Support, class Mechanism>
void check_reachable_release(const char* who, const Support& support, const Mechanism& mechanism, const Eigen::VectorXd& z,
                             double n) {
  if constexpr (interval_support<Support>) check_reachable_release(who, mechanism, z, n, support.lower(n), support.upper(n));
}

// The support of a joint draw (total, centre) of two sums of length D, each on Support: gibbs_ss_truncated's
// (s, s_c) block goes through the one retry rule with it.
template <class Support, int D>
struct joint_support {
  static constexpr int rejection_tries = Support::rejection_tries;
  template <class V>
  static bool contains(const V& x, double n) {
    return Support::contains(x.template head<D>(), n) && Support::contains(x.template tail<D>(), n);
  }
  template <class V>
  static bool project(V& x, double n, numerical_events& events) {
    Eigen::Matrix<double, D, 1> total = x.template head<D>(), centre = x.template tail<D>();
    const bool moved_total = Support::project(total, n, events);
    const bool moved_centre = Support::project(centre, n, events);
    x.template head<D>() = total;
    x.template tail<D>() = centre;
    return moved_total || moved_centre;
  }
};

// s on the support by a given draw (which writes s): up to Support::rejection_tries draws, then the projection (both
// counted in events). The one retry rule of every Gibbs-SS sweep.
template <class Support, class V, class Draw>
void draw_with_retries(const Support& support, double n, V& s, numerical_events& events, Draw&& draw) {
  if constexpr (Support::rejection_tries > 0) {
    for (int tries = 0; tries < Support::rejection_tries; ++tries) {
      draw();
      if (support.contains(s, n)) return;
      ++events.rejected_draws;
    }
  } else {
    draw();
  }
  if (support.project(s, n, events)) ++events.projections;
}

// One draw of s ~ N(mean, L L^T) on the support: an exact truncated normal when the statistic is one number with an
// interval support; otherwise up to Support::rejection_tries draws, then the projection (both counted). `e` is the
// caller's workspace for the standard normals (sized here once, so fixed-size and preallocated sweeps do not allocate).
template <class Support, class V, class L, class E, random_engine G>
void draw_on_support(const Support& support, G& g, const V& mean, const L& chol, double n, V& s, E& e, numerical_events& events) {
  if constexpr (V::SizeAtCompileTime == 1 && interval_support<Support>) {
    const double sd = chol(0, 0);
    const double lo = support.lower(n), hi = support.upper(n);
    if (sd > 0.0 && std::isfinite(sd)) {
      s(0) = draw_truncated_normal(g, mean(0), sd, lo, hi);
    } else {
      s(0) = std::clamp(mean(0), lo, hi);  // degenerate conditional: its mean, on the valid set
    }
  } else {
    if (e.size() != mean.size()) e.resize(mean.size());
    auto draw = [&] {
      for (Eigen::Index j = 0; j < e.size(); ++j) e(j) = draw_normal(g);
      if constexpr (V::SizeAtCompileTime == Eigen::Dynamic) {
        s.noalias() = chol.template triangularView<Eigen::Lower>() * e;  // no temporary: s already has its size
        s += mean;
      } else {
        s = mean + chol.template triangularView<Eigen::Lower>() * e;
      }
    };
    draw_with_retries(support, n, s, events, draw);
  }
}

// log N(z; mean, cov) up to its constant: the release's likelihood with the exact sum integrated out (cov holds the sum's
// CLT covariance plus the noise variances), which the collapsed prior-proposal moves compare. -infinity where cov is not
// positive definite or the value is not finite. llt and r are the caller's workspace (sized once for dynamic models).
template <class Z, class M, class C, class Llt, class R>
double collapsed_log_likelihood(const Z& z, const M& mean, const C& cov, Llt& llt, R& r) {
  llt.compute(cov);
  if (llt.info() != Eigen::Success) return -std::numeric_limits<double>::infinity();
  r = z - mean;
  llt.matrixL().solveInPlace(r);
  const double value = -0.5 * r.squaredNorm() - llt.matrixLLT().diagonal().array().log().sum();
  return std::isfinite(value) ? value : -std::numeric_limits<double>::infinity();
}

// Whether a prior-proposal move is accepted, from the collapsed log-likelihoods of the current point and the candidate
// (the prior cancels from the Metropolis-Hastings ratio): a candidate of likelihood zero is refused; from a current
// point of likelihood zero any other candidate is taken (no uniform is drawn then).
template <random_engine G>
bool accept_collapsed_move(double current, double candidate, G& g) {
  if (candidate == -std::numeric_limits<double>::infinity()) return false;
  return current == -std::numeric_limits<double>::infinity() || std::log(draw_uniform(g)) < candidate - current;
}

// The index k of a normalised discrete law (weights summing to 1) at the uniform u by inverse CDF: the first k whose
// cumulative weight reaches u, the last one when rounding leaves the total just below u. The exact sum blocks' draw.
inline std::size_t inverse_cdf_index(const std::vector<double>& weights, double u) {
  std::size_t k = 0;
  double cumulative = weights[0];
  while (cumulative < u && k + 1 < weights.size()) cumulative += weights[++k];
  return k;
}

/// Base of a sum block B that enumerates s | theta, z: B::sum_weights(model, theta, n) gives the normalised weights of
/// the sums B::window_first(), window_first() + 1, ...; a draw is one inverse CDF over them.
template <class B>
struct enumerating_sum_block {
  /// s | theta, z.
  template <class Model, random_engine G>
  void draw_sum(const Model& model, const typename Model::parameter_type& theta, double n, typename Model::vector_type& s,
                numerical_events&, G& g) {
    s(0) = draw(model, theta, n, g);
  }
  /// One draw of s | theta, z by inverse CDF over the enumerated sums.
  template <class Model, random_engine G>
  double draw(const Model& model, const typename Model::parameter_type& theta, double n, G& g) {
    auto& block = static_cast<B&>(*this);
    const std::vector<double>& weights = block.sum_weights(model, theta, n);
    return block.window_first() + static_cast<double>(inverse_cdf_index(weights, draw_uniform(g)));
  }
};

// w_j | z_j - s_j for every coordinate, from the mechanism's scale-mixture view (App. B.2); nothing for fixed variances.
template <scale_mixture_noise Mechanism, class Z, class S, class W, random_engine G>
void redraw_variances(const Mechanism& mechanism, const Z& z, const S& s, W& w, G& g) {
  if constexpr (!Mechanism::fixed_variance) {
    for (Eigen::Index j = 0; j < w.size(); ++j) w(j) = mechanism.redraw_variance(z(j) - s(j), g);
  }
}

}  // namespace privpost::detail
