// privpost/diagnostics/ecdf_band.hpp
// Simultaneous confidence bands for the empirical CDF of uniform values: the graphical test of simulation-based
// calibration (Saeilynoja, Buerkner & Vehtari, "Graphical test for discrete uniformity and its applications in
// goodness-of-fit evaluation and multiple sample comparison", Statistics and Computing 32, 2022, Sec. 2; the
// simulation method of their Sec. 2.2). The true parameter's posterior quantiles of a calibrated method are uniform on
// [0, 1]; their ECDF, evaluated at z_i = i / K (i = 1, ..., K - 1), has n F(z_i) ~ Binomial(n, z_i) at each point.
// The band holds every point whose count has a two-sided binomial tail probability of at least gamma, with gamma set
// by simulation so that the whole ECDF of n uniform values stays inside it with probability `level`. Plotted as
// F(z) - z (the ECDF-difference plot), a calibrated method's curve stays inside; a curve that leaves it anywhere
// rejects uniformity at 1 - level, and where it leaves tells how (above the band in the middle: intervals too wide).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/uniform.hpp"

namespace privpost {

/// A simultaneous band for the ECDF of n uniform values at the points z (fractions of n, so on the ECDF's scale).
struct ecdf_band {
  int n = 0;              ///< number of values the band is for
  double level = 0.95;    ///< simultaneous coverage
  double gamma = 0.0;     ///< the pointwise two-sided tail probability that gives it (found by simulation)
  Eigen::VectorXd z;      ///< evaluation points i / K, i = 1, ..., K - 1
  Eigen::VectorXd lower;  ///< the band's lower edge at each z (ECDF scale, a multiple of 1 / n)
  Eigen::VectorXd upper;  ///< its upper edge
};

namespace detail {
// The two-sided binomial tail probability of count x at (n, p): 2 min(P(X <= x), P(X >= x)), at most 1.
inline double binomial_two_sided(int x, int n, double p) {
  const boost::math::binomial_distribution<double> b(n, p);
  const double below = boost::math::cdf(b, x);
  const double above = x == 0 ? 1.0 : boost::math::cdf(boost::math::complement(b, x - 1));
  return std::min(1.0, 2.0 * std::min(below, above));
}

// The counts of sorted values at or below each z (a merge).
inline std::vector<int> counts_at(const std::vector<double>& sorted, const Eigen::VectorXd& z) {
  std::vector<int> out(static_cast<std::size_t>(z.size()));
  std::size_t k = 0;
  for (Eigen::Index i = 0; i < z.size(); ++i) {
    while (k < sorted.size() && sorted[k] <= z(i)) ++k;
    out[static_cast<std::size_t>(i)] = static_cast<int>(k);
  }
  return out;
}
}  // namespace detail

/// The ECDF of `values` at the points z (the fraction of values at or below each).
inline Eigen::VectorXd ecdf_at(std::span<const double> values, const Eigen::VectorXd& z) {
  std::vector<double> v(values.begin(), values.end());
  for (const double x : v) check_finite("ecdf_at", "value", x);
  std::sort(v.begin(), v.end());
  const auto c = detail::counts_at(v, z);
  Eigen::VectorXd out(z.size());
  for (Eigen::Index i = 0; i < z.size(); ++i)
    out(i) = v.empty() ? 0.0 : static_cast<double>(c[static_cast<std::size_t>(i)]) / static_cast<double>(v.size());
  return out;
}

/// The simultaneous `level` band for the ECDF of n independent uniform(0, 1) values at z_i = i / points
/// (i = 1, ..., points - 1): `simulations` samples of n uniforms give the distribution of the smallest two-sided
/// binomial tail probability over the points, and gamma is its (1 - level) quantile (Saeilynoja et al. 2022,
/// Sec. 2.2). Cost: simulations x points binomial CDF evaluations, plus a bisection per point for the edges.
/// std::invalid_argument for n < 1, points < 2, level outside (0, 1) or simulations < 100.
template <random_engine G>
ecdf_band uniform_ecdf_band(int n, int points, double level, int simulations, G& g) {
  if (n < 1) throw_invalid("uniform_ecdf_band", "n", n, "an integer >= 1");
  if (points < 2) throw_invalid("uniform_ecdf_band", "points", points, "an integer >= 2");
  if (!(level > 0.0 && level < 1.0)) throw_invalid("uniform_ecdf_band", "level", level, "a number in (0, 1)");
  if (simulations < 100) throw_invalid("uniform_ecdf_band", "simulations", simulations, "an integer >= 100");
  ecdf_band band;
  band.n = n;
  band.level = level;
  band.z.resize(points - 1);
  for (int i = 1; i < points; ++i) band.z(i - 1) = static_cast<double>(i) / static_cast<double>(points);
  std::vector<double> smallest(static_cast<std::size_t>(simulations));
  std::vector<double> u(static_cast<std::size_t>(n));
  for (auto& s : smallest) {
    for (auto& x : u) x = draw_uniform(g);
    std::sort(u.begin(), u.end());
    const auto c = detail::counts_at(u, band.z);
    double m = 1.0;
    for (Eigen::Index i = 0; i < band.z.size(); ++i)
      m = std::min(m, detail::binomial_two_sided(c[static_cast<std::size_t>(i)], n, band.z(i)));
    s = m;
  }
  std::sort(smallest.begin(), smallest.end());
  // P(smallest >= gamma) = level: the (1 - level) quantile of the simulated smallest tail probabilities.
  band.gamma = smallest[static_cast<std::size_t>(std::floor((1.0 - level) * static_cast<double>(simulations)))];
  band.lower.resize(band.z.size());
  band.upper.resize(band.z.size());
  for (Eigen::Index i = 0; i < band.z.size(); ++i) {
    const boost::math::binomial_distribution<double> b(n, band.z(i));
    // lower: the smallest x with P(X <= x) >= gamma / 2; upper: the largest x with P(X >= x) >= gamma / 2. Between
    // them exactly the counts whose two-sided tail probability is >= gamma (both tails are monotone in x).
    int lo = 0, hi = n;
    while (lo < hi) {
      const int mid = lo + (hi - lo) / 2;
      if (boost::math::cdf(b, mid) >= band.gamma / 2.0) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    band.lower(i) = static_cast<double>(lo) / static_cast<double>(n);
    lo = 0;
    hi = n;
    while (lo < hi) {
      const int mid = lo + (hi - lo + 1) / 2;
      const double above = boost::math::cdf(boost::math::complement(b, mid - 1));
      if (above >= band.gamma / 2.0) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    band.upper(i) = static_cast<double>(lo) / static_cast<double>(n);
  }
  return band;
}

/// Whether the ECDF of `values` lies inside the band at every one of its points (std::invalid_argument unless there
/// are band.n values).
inline bool inside_band(const ecdf_band& band, std::span<const double> values) {
  if (static_cast<int>(values.size()) != band.n)
    throw_invalid("inside_band", "number of values", static_cast<double>(values.size()),
                  std::to_string(band.n) + " (the band's n)");
  const Eigen::VectorXd f = ecdf_at(values, band.z);
  const double eps = 0.25 / static_cast<double>(band.n);  // the edges and the ECDF are multiples of 1 / n
  return ((f.array() >= band.lower.array() - eps) && (f.array() <= band.upper.array() + eps)).all();
}

}  // namespace privpost
