// privpost/samplers/cgm/cgm_noise.hpp
// The evidence term log p(y | n) of released contingency tables for CGM-EM (docs/design-cgm.md Sec. 3.3, 3.5):
// Laplace noise of scale b (the default release, b = 2|E| / epsilon) and Gaussian noise of standard deviation sigma.
// Each models the cgm_noise concept: value, supergradient, and the dual pieces of the box-dual E-step.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <concepts>
#include <limits>
#include <type_traits>

#include "privpost/core/errors.hpp"
#include "privpost/families/graphical/pairwise_graph.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"

namespace privpost {

/// Laplace evidence: log p(y | n) = -d log(2b) - |y - n|_1 / b, the Laplace mechanism's own density. The dual box is |g_j| <=
/// 1/b, and the duality gap at residual r and dual point g is sum_j |r_j| / b - g_j r_j (>= 0 inside the box).
class laplace_cgm_noise {
 public:
  /// std::invalid_argument unless scale is finite and > 0.
  explicit laplace_cgm_noise(double scale) : scale_(scale) { check_positive_finite("laplace_cgm_noise", "scale b", scale); }
  /// The Laplace scale b.
  double scale() const noexcept { return scale_; }
  /// log p(y | n); std::invalid_argument when the sizes differ or a value is not finite.
  double log_likelihood(const Eigen::VectorXd& y, const Eigen::VectorXd& n) const {
    return detail::laplace_log_likelihood("laplace_cgm_noise::log_likelihood", y, n, scale_);
  }
  /// sign(y_j - n_j) / b, 0 at ties (a member of the subdifferential).
  void supergradient(const Eigen::VectorXd& y, const Eigen::VectorXd& n, Eigen::VectorXd& g) const {
    check_size_match("laplace_cgm_noise::supergradient", "y", y.size(), "n", n.size());
    g.resize(y.size());
    for (Eigen::Index j = 0; j < y.size(); ++j) {
      const double r = y(j) - n(j);
      g(j) = r > 0.0 ? 1.0 / scale_ : (r < 0.0 ? -1.0 / scale_ : 0.0);
    }
  }
  /// The dual box's half-width, 1 / b.
  double dual_box() const noexcept { return 1.0 / scale_; }
  /// The dual's quadratic coefficient: 0 (none).
  double dual_quadratic() const noexcept { return 0.0; }
  /// The duality gap at residual r and dual point g (class comment).
  template <class R, class G>
  double duality_gap(const R& r, const G& g) const {
    double gap = 0.0;
    for (Eigen::Index j = 0; j < r.size(); ++j) gap += std::abs(r(j)) / scale_ - g(j) * r(j);
    return gap;
  }

 private:
  double scale_;
};

/// Gaussian evidence: log p(y | n) = -d log(sigma sqrt(2 pi)) - |y - n|^2 / (2 sigma^2), the Gaussian mechanism's own
/// density. No box; the dual has the
/// quadratic term sigma^2 |g|^2 / 2 and the gap sum_j (r_j - sigma^2 g_j)^2 / (2 sigma^2).
class gaussian_cgm_noise {
 public:
  /// std::invalid_argument unless sigma is finite and > 0.
  explicit gaussian_cgm_noise(double sigma) : sigma_(sigma) { check_positive_finite("gaussian_cgm_noise", "sigma", sigma); }
  /// The Gaussian noise sd sigma.
  double sigma() const noexcept { return sigma_; }
  /// log p(y | n); std::invalid_argument when the sizes differ or a value is not finite.
  double log_likelihood(const Eigen::VectorXd& y, const Eigen::VectorXd& n) const {
    return detail::gaussian_log_likelihood("gaussian_cgm_noise::log_likelihood", y, n, sigma_);
  }
  /// The gradient (y - n) / sigma^2; std::invalid_argument when the sizes differ.
  void supergradient(const Eigen::VectorXd& y, const Eigen::VectorXd& n, Eigen::VectorXd& g) const {
    check_size_match("gaussian_cgm_noise::supergradient", "y", y.size(), "n", n.size());
    g = (y - n) / (sigma_ * sigma_);
  }
  /// No dual box: +infinity.
  double dual_box() const noexcept { return std::numeric_limits<double>::infinity(); }
  /// The dual's quadratic coefficient, sigma^2.
  double dual_quadratic() const noexcept { return sigma_ * sigma_; }
  /// The duality gap at residual r and dual point g (class comment).
  template <class R, class G>
  double duality_gap(const R& r, const G& g) const {
    const double s2 = sigma_ * sigma_;
    double gap = 0.0;
    for (Eigen::Index j = 0; j < r.size(); ++j) gap += (r(j) - s2 * g(j)) * (r(j) - s2 * g(j)) / (2.0 * s2);
    return gap;
  }

 private:
  double sigma_;
};

/// The Gaussian of the Laplace noise's variance (sd sqrt(2) b): MAP-EM's surrogate evidence where the counts dominate the
/// noise (map_em_prefers_gaussian says why). Only MAP-EM's point estimate is concerned: the Bayesian CGM's sampler always
/// models the exact mechanism.
inline gaussian_cgm_noise laplace_gaussian_surrogate(const laplace_cgm_noise& noise) {
  return gaussian_cgm_noise(std::sqrt(2.0) * noise.scale());
}

/// Whether MAP-EM should fit a Laplace release of graph's edge tables (scale b, N records) through the Gaussian surrogate:
/// with an exact back end (exact_inference: tree BP on forests, the junction tree, brute force), when every edge table's
/// mean cell count N / (K_u K_v) is at least 2 b. Not with loopy BP: there the surrogate's unbounded dual let one of the
/// four Erdos-Renyi releases of docs/design-cgm.md's AT-7 row (N = 10^4, epsilon 0.1) oscillate, no E-step converging. Why the
/// counts: the MAP E-step under the Laplace density
/// is an L1 fit whose optimum sets n_j = y_j exactly on most released cells once the counts dominate the noise (measured
/// on the dissertation's chain, 10 nodes x 3 states, Laplace at 2|E| / epsilon: on 53-69% of the cells at N / 9 = 6-617 b,
/// none at N = 10^5, epsilon 0.01, where every fit stopped at a 2000-iteration cap still moving),
/// so a node marginal that two edge tables both report is taken from one of them instead of averaged; the Gaussian of the
/// same variance averages them. Median exact KL(truth || MAP-EM) over 5 models x 2 releases, exact against surrogate:
/// at N / 9 = 6.2 b (N = 10^3, epsilon 1; 10^4, 0.1; 10^5, 0.01) 0.275 / 0.249, 0.303 / 0.251, 0.263 / 0.248; at 62 b
/// (10^4, 1; 10^5, 0.1) 0.0126 / 0.0086, 0.0099 / 0.0073; at 617 b (10^5, 1) 0.00049 / 0.00040. Where the noise
/// dominates the exact density wins: at 0.62 b (10^3, 0.1; 10^4, 0.01) 1.86 / 2.14, 1.85 / 1.94, at 0.93 b 1.64 / 1.76;
/// between 1 and 2 b neither wins consistently (the surrogate's KL -8% to +17% of the exact one's). The surrogate's
/// smooth dual also makes EM converge in 5-10 times fewer iterations there. std::invalid_argument unless n_records and scale are
/// finite and > 0.
inline bool map_em_prefers_gaussian(const pairwise_graph& graph, double n_records, double laplace_scale, bool exact_inference) {
  constexpr const char* f = "map_em_prefers_gaussian";
  check_positive_finite(f, "N", n_records);
  check_positive_finite(f, "Laplace scale b", laplace_scale);
  if (!exact_inference) return false;
  for (int e = 0; e < graph.num_edges(); ++e) {
    const auto [u, v] = graph.edge(e);
    const double cells = static_cast<double>(graph.cardinality(u)) * graph.cardinality(v);
    if (n_records / cells < 2.0 * laplace_scale) return false;
  }
  return graph.num_edges() > 0;
}

/// MAP-EM's evidence term for a Laplace release: the mechanism's own density (exact), the Gaussian of its variance
/// (gaussian_surrogate), or as map_em_prefers_gaussian decides (automatic).
enum class map_em_evidence { automatic, exact, gaussian_surrogate };

/// A callable with_map_em_evidence can hand either evidence term: invocable with laplace_cgm_noise and with
/// gaussian_cgm_noise, returning the same type for both (one return type whichever term is chosen).
template <class Fit>
concept map_em_fit = std::invocable<Fit&, laplace_cgm_noise> && std::invocable<Fit&, gaussian_cgm_noise> &&
    std::same_as<std::invoke_result_t<Fit&, laplace_cgm_noise>, std::invoke_result_t<Fit&, gaussian_cgm_noise>>;

/// Calls fit(evidence) with the evidence term choice selects for a Laplace release (noise) of graph's edge tables from
/// N records fitted through a back end that is exact or not; returns what fit returns. Whether it took the surrogate is
/// written to *surrogate when given. std::invalid_argument as map_em_prefers_gaussian.
template <map_em_fit Fit>
decltype(auto) with_map_em_evidence(map_em_evidence choice, const laplace_cgm_noise& noise, const pairwise_graph& graph,
                                    double n_records, bool exact_inference, Fit&& fit, bool* surrogate = nullptr) {
  const bool gaussian =
      choice == map_em_evidence::gaussian_surrogate ||
      (choice == map_em_evidence::automatic && map_em_prefers_gaussian(graph, n_records, noise.scale(), exact_inference));
  if (surrogate != nullptr) *surrogate = gaussian;
  if (gaussian) return fit(laplace_gaussian_surrogate(noise));
  return fit(noise);
}

/// The evidence term of a release made by a Laplace mechanism (b = its scale).
inline laplace_cgm_noise make_cgm_noise(const laplace_mechanism& m) { return laplace_cgm_noise(m.scale()); }
/// The evidence term of a release made by a Gaussian mechanism (its sigma).
inline gaussian_cgm_noise make_cgm_noise(const gaussian_mechanism& m) { return gaussian_cgm_noise(m.sigma()); }

}  // namespace privpost
