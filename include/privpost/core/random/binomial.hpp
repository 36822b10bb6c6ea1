// privpost/core/random/binomial.hpp
// draw_binomial: exact Binomial(n, p) draws, by inversion (a CDF walk from 0) when min(p, 1 - p) n < 10 and by
// Hoermann's (1993) transformed rejection with decomposition (BTRD) above; both loops bounded. draw_multinomial:
// Multinomial(n, w / sum(w)) by conditional binomials, O(K) binomial draws whatever n. Used to simulate count tables in
// the CGM studies (docs/design-cgm.md Sec. 5.6), where N reaches 10^7 and record-by-record simulation would dominate.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/math/log_gamma.hpp"
#include "privpost/core/random/uniform.hpp"

namespace privpost {

namespace detail {
// Below this mean (of the smaller of p and 1 - p) draws are by inversion, above it by BTRD (Hoermann 1993, Sec. 3).
inline constexpr double binomial_inversion_limit = 10.0;
// Bound of the CDF walk and of the BTRD loop. The walk: P(K > 1000) < 1e-300 when n p < 10. BTRD accepts with
// probability above 0.8 for every n p >= 10 (Hoermann 1993, Table 1), so 1000 rejections in a row have probability
// below 1e-690: only a broken engine reaches the bound.
inline constexpr int binomial_max_steps = 1000;
// Largest n accepted: counts stay exact in a double up to 2^53.
inline constexpr std::int64_t binomial_max_trials = std::int64_t{1} << 53;

// Stirling's correction fc(k) = log k! - [(k + 1/2) log(k + 1) - (k + 1) + log(2 pi) / 2] (Hoermann 1993, Sec. 3.2):
// computed directly below 10, by its asymptotic series (error < 1e-14) above.
inline double binomial_stirling_correction(double k) {
  if (k < 10.0) return log_gamma(k + 1.0) - ((k + 0.5) * std::log(k + 1.0) - (k + 1.0) + 0.5 * std::log(2.0 * std::numbers::pi));
  const double r = 1.0 / (k + 1.0), r2 = r * r;
  return (1.0 / 12.0 - (1.0 / 360.0 - r2 / 1260.0) * r2) * r;
}

// Inversion for n p < 10, p <= 1/2: walk the pmf from k = 0 with f(k + 1) = f(k) ((n + 1) s / (k + 1) - s), s = p / q.
template <random_engine G>
inline std::int64_t binomial_inversion(G& g, std::int64_t n, double p) {
  const double q = 1.0 - p, s = p / q, a = (static_cast<double>(n) + 1.0) * s;
  double f = std::exp(static_cast<double>(n) * std::log1p(-p));  // q^n >= e^(-10 - 10 p) > 0: no underflow
  double u = draw_uniform(g);
  const std::int64_t last = n < binomial_max_steps ? n : binomial_max_steps;
  for (std::int64_t k = 0; k < last; ++k) {
    if (u <= f) return k;
    u -= f;
    f *= a / static_cast<double>(k + 1) - s;
  }
  return last;  // the rounding remainder of the walk (below 1e-15) lands on the last value reached
}

// BTRD (Hoermann 1993, Algorithm BTRD, steps 0-5) for n p >= 10, p <= 1/2.
template <random_engine G>
inline std::int64_t binomial_btrd(G& g, std::int64_t n, double p) {
  const double nd = static_cast<double>(n), q = 1.0 - p;
  const double m = std::floor((nd + 1.0) * p);
  const double r = p / q, nr = (nd + 1.0) * r, npq = nd * p * q, spq = std::sqrt(npq);
  const double b = 1.15 + 2.53 * spq;
  const double a = -0.0873 + 0.0248 * b + 0.01 * p;
  const double c = nd * p + 0.5;
  const double alpha = (2.83 + 5.1 / b) * spq;
  const double vr = 0.92 - 4.2 / b;
  const double urvr = 0.86 * vr;
  for (int tries = 0; tries < binomial_max_steps; ++tries) {
    // Step 1: the immediate-acceptance region of the triangular-like centre.
    double v = draw_uniform(g);
    if (v <= urvr) {
      const double u = v / vr - 0.43;
      return static_cast<std::int64_t>(std::floor((2.0 * a / (0.5 - std::abs(u)) + b) * u + c));
    }
    // Step 2: a point under the hat.
    double u;
    if (v >= vr) {
      u = draw_uniform(g) - 0.5;
    } else {
      u = v / vr - 0.93;
      u = (u < 0.0 ? -0.5 : 0.5) - u;
      v = draw_uniform(g) * vr;
    }
    // Step 3: the candidate k and the ratio v to compare with f(k) / f(m).
    const double us = 0.5 - std::abs(u);
    const double k = std::floor((2.0 * a / us + b) * u + c);
    if (k < 0.0 || k > nd) continue;
    v = v * alpha / (a / (us * us) + b);
    const double km = std::abs(k - m);
    if (km <= 15.0) {
      // Step 3.1: f(k) / f(m) by the recursion of the pmf.
      double f = 1.0;
      if (m < k) {
        for (double i = m + 1.0; i <= k; i += 1.0) f *= nr / i - r;
      } else if (m > k) {
        for (double i = k + 1.0; i <= m; i += 1.0) v *= nr / i - r;
      }
      if (v <= f) return static_cast<std::int64_t>(k);
      continue;
    }
    // Step 3.2: squeeze on log v by the normal approximation of log f(k) / f(m).
    v = std::log(v);
    const double rho = (km / npq) * (((km / 3.0 + 0.625) * km + 1.0 / 6.0) / npq + 0.5);
    const double t = -km * km / (2.0 * npq);
    if (v < t - rho) return static_cast<std::int64_t>(k);
    if (v > t + rho) continue;
    // Step 3.3: the exact log f(k) / f(m), through Stirling's corrections (no cancellation of large log-factorials).
    const double nm = nd - m + 1.0, nk = nd - k + 1.0;
    const double h =
        (m + 0.5) * std::log((m + 1.0) / (r * nm)) + binomial_stirling_correction(m) + binomial_stirling_correction(nd - m);
    if (v <= h + (nd + 1.0) * std::log(nm / nk) + (k + 0.5) * std::log(nk * r / (k + 1.0)) - binomial_stirling_correction(k) -
                 binomial_stirling_correction(nd - k))
      return static_cast<std::int64_t>(k);
  }
  throw retry_limit_exceeded("draw_binomial: BTRD exceeded 1000 tries (broken engine?)");
}
}  // namespace detail

/// A Binomial(n, p) draw, n in [0, 2^53], p in [0, 1] (std::invalid_argument naming the value otherwise). Exact up to
/// the engine's 53-bit uniforms: inversion when n min(p, 1 - p) < 10, Hoermann's BTRD above; p > 1/2 is drawn as
/// n - Binomial(n, 1 - p). Bounded: throws retry_limit_exceeded only for an engine that is not random.
template <random_engine G>
inline std::int64_t draw_binomial(G& g, std::int64_t n, double p) {
  if (n < 0 || n > detail::binomial_max_trials)
    throw_invalid("draw_binomial", "n", static_cast<double>(n), "an integer in [0, 2^53]");
  if (!(p >= 0.0 && p <= 1.0)) throw_invalid("draw_binomial", "p", p, "a probability in [0, 1]");
  if (n == 0 || p == 0.0) return 0;
  if (p == 1.0) return n;
  const bool flip = p > 0.5;
  const double ps = flip ? 1.0 - p : p;
  const std::int64_t k = static_cast<double>(n) * ps < detail::binomial_inversion_limit ? detail::binomial_inversion(g, n, ps)
                                                                                        : detail::binomial_btrd(g, n, ps);
  return flip ? n - k : k;
}

/// Multinomial(n, w / sum(w)) into counts (of w's size; whole numbers summing to n), by conditional binomials:
/// count_i ~ Binomial(n - sum_(j<i) count_j, w_i / sum_(j>=i) w_j). Cells of weight 0 get 0; the last cell of positive
/// weight takes the remainder, so rounding in the running weight sum cannot put a count on a zero-weight cell. w needs
/// finite entries >= 0 with a positive sum, n in [0, 2^53] and counts of the same size (std::invalid_argument
/// otherwise). Never allocates: counts may be a segment of a larger table.
template <random_engine G>
inline void draw_multinomial(G& g, std::int64_t n, const Eigen::Ref<const Eigen::VectorXd>& w,
                             Eigen::Ref<Eigen::VectorXd> counts) {
  if (n < 0 || n > detail::binomial_max_trials)
    throw_invalid("draw_multinomial", "n", static_cast<double>(n), "an integer in [0, 2^53]");
  double total = 0.0;
  Eigen::Index last = -1;
  for (Eigen::Index i = 0; i < w.size(); ++i) {
    if (!(w(i) >= 0.0 && std::isfinite(w(i)))) throw_invalid("draw_multinomial", "weight", w(i), "a finite number >= 0");
    total += w(i);
    if (w(i) > 0.0) last = i;
  }
  if (!(total > 0.0 && std::isfinite(total)))
    throw_invalid("draw_multinomial", "sum of the weights", total, "a finite number > 0");
  if (counts.size() != w.size())
    throw_invalid("draw_multinomial", "size of counts", static_cast<double>(counts.size()), "the number of weights");
  counts.setZero();
  std::int64_t left = n;
  double rest = total;
  for (Eigen::Index i = 0; i <= last && left > 0; ++i) {
    if (w(i) == 0.0) continue;
    const std::int64_t k = i == last ? left : draw_binomial(g, left, std::min(1.0, w(i) / rest));
    counts(i) = static_cast<double>(k);
    left -= k;
    rest = std::max(rest - w(i), w(last));  // rounding: the remaining cells still include the last positive one
  }
}

}  // namespace privpost
