// privpost/samplers/cgm/cgm_noise.hpp
// The evidence term log p(y | n) of released contingency tables for CGM-EM (docs/design-cgm.md Sec. 3.3, 3.5), read
// from the mechanism's coordinate view: Laplace noise of scale b (the default release, b = 2|E| / epsilon) or Gaussian
// noise of standard deviation sigma; MAP-EM's Gaussian surrogate of Laplace noise.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <concepts>
#include <limits>
#include <type_traits>

#include "privpost/core/errors.hpp"
#include "privpost/families/graphical/pairwise_graph.hpp"
#include "privpost/mechanisms/noise_views.hpp"

namespace privpost {

/// The evidence term log p(y | n) of released tables with independent noise per cell on the real line, read from the
/// mechanism's coordinate view (mechanisms/noise_views.hpp), so any coordinatewise mechanism reaches CGM-EM:
///   Laplace of scale b:        log p = -d log(2b) - |y - n|_1 / b; the dual box |g_j| <= 1/b; the duality gap at
///                              residual r and dual point g, sum_j |r_j| / b - g_j r_j (>= 0 inside the box);
///   Gaussian of sd sigma:      log p = -d log(sigma sqrt(2 pi)) - |y - n|^2 / (2 sigma^2); no box, the dual's
///                              quadratic term sigma^2 |g|^2 / 2 and the gap sum_j (r_j - sigma^2 g_j)^2 / (2 sigma^2).
/// Models the cgm_noise concept: value, supergradient, and the dual pieces of the box-dual E-step.
class cgm_evidence {
 public:
  /// Laplace noise of scale b (std::invalid_argument unless finite and > 0).
  static cgm_evidence laplace(double b) {
    check_positive_finite("cgm_evidence", "scale b", b);
    return cgm_evidence(false, b);
  }
  /// Gaussian noise of standard deviation sigma (std::invalid_argument unless finite and > 0).
  static cgm_evidence gaussian(double sigma) {
    check_positive_finite("cgm_evidence", "sigma", sigma);
    return cgm_evidence(true, sigma);
  }
  /// The evidence of a release by mechanism m (its coordinate view; a user's mechanism declares it, docs/concepts.md).
  /// std::invalid_argument for noise on a lattice (the discrete mechanisms: their tables are not modelled here).
  template <coordinatewise_mechanism M>
  explicit cgm_evidence(const M& m) : cgm_evidence(from_view(coordinate_view(m))) {}

  /// Whether the noise is Gaussian (else Laplace).
  bool is_gaussian() const noexcept { return gaussian_; }
  /// The Laplace scale b or the Gaussian sd sigma.
  double scale() const noexcept { return scale_; }
  /// log p(y | n); std::invalid_argument when the sizes differ or a value is not finite.
  double log_likelihood(const Eigen::VectorXd& y, const Eigen::VectorXd& n) const {
    return gaussian_ ? detail::gaussian_log_likelihood("cgm_evidence::log_likelihood", y, n, scale_)
                     : detail::laplace_log_likelihood("cgm_evidence::log_likelihood", y, n, scale_);
  }
  /// Gaussian: the gradient (y - n) / sigma^2. Laplace: sign(y_j - n_j) / b, 0 at ties (a member of the
  /// subdifferential). std::invalid_argument when the sizes differ.
  void supergradient(const Eigen::VectorXd& y, const Eigen::VectorXd& n, Eigen::VectorXd& g) const {
    check_size_match("cgm_evidence::supergradient", "y", y.size(), "n", n.size());
    if (gaussian_) {
      g = (y - n) / (scale_ * scale_);
      return;
    }
    g.resize(y.size());
    for (Eigen::Index j = 0; j < y.size(); ++j) {
      const double r = y(j) - n(j);
      g(j) = r > 0.0 ? 1.0 / scale_ : (r < 0.0 ? -1.0 / scale_ : 0.0);
    }
  }
  /// The dual box's half-width: 1 / b, or +infinity (no box) for Gaussian noise.
  double dual_box() const noexcept { return gaussian_ ? std::numeric_limits<double>::infinity() : 1.0 / scale_; }
  /// The dual's quadratic coefficient: sigma^2, or 0 (none) for Laplace noise.
  double dual_quadratic() const noexcept { return gaussian_ ? scale_ * scale_ : 0.0; }
  /// The duality gap at residual r and dual point g (class comment).
  template <class R, class G>
  double duality_gap(const R& r, const G& g) const {
    double gap = 0.0;
    if (gaussian_) {
      const double s2 = scale_ * scale_;
      for (Eigen::Index j = 0; j < r.size(); ++j) gap += (r(j) - s2 * g(j)) * (r(j) - s2 * g(j)) / (2.0 * s2);
    } else {
      for (Eigen::Index j = 0; j < r.size(); ++j) gap += std::abs(r(j)) / scale_ - g(j) * r(j);
    }
    return gap;
  }

 private:
  cgm_evidence(bool gaussian, double scale) : gaussian_(gaussian), scale_(scale) {}
  static cgm_evidence from_view(const coordinate_noise& v) {
    if (v.lattice())
      throw_invalid("cgm_evidence", "noise granularity", v.granularity(), "0 (noise on the real line: Laplace or Gaussian)");
    return v.absolute_weight() > 0.0 ? laplace(v.scale()) : gaussian(v.scale());
  }

  bool gaussian_;
  double scale_;
};

/// The Gaussian of the Laplace noise's variance (sd sqrt(2) b): MAP-EM's surrogate evidence where the counts dominate the
/// noise (map_em_prefers_gaussian says why). Only MAP-EM's point estimate is concerned: the Bayesian CGM's sampler always
/// models the exact mechanism.
/// std::invalid_argument for Gaussian evidence (it is its own).
inline cgm_evidence laplace_gaussian_surrogate(const cgm_evidence& noise) {
  if (noise.is_gaussian())
    throw_invalid("laplace_gaussian_surrogate", "Gaussian evidence of sd", noise.scale(), "Laplace evidence");
  return cgm_evidence::gaussian(std::sqrt(2.0) * noise.scale());
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

/// A callable with_map_em_evidence can hand the evidence term it chose (cgm_evidence::is_gaussian() tells which).
template <class Fit>
concept map_em_fit = std::invocable<Fit&, cgm_evidence>;

/// Calls fit(evidence) with the evidence term choice selects for a Laplace release (noise) of graph's edge tables from
/// N records fitted through a back end that is exact or not; returns what fit returns. Whether it took the surrogate is
/// written to *surrogate when given. std::invalid_argument as map_em_prefers_gaussian, or for Gaussian evidence.
template <map_em_fit Fit>
decltype(auto) with_map_em_evidence(map_em_evidence choice, const cgm_evidence& noise, const pairwise_graph& graph,
                                    double n_records, bool exact_inference, Fit&& fit, bool* surrogate = nullptr) {
  const bool gaussian =
      choice == map_em_evidence::gaussian_surrogate ||
      (choice == map_em_evidence::automatic && map_em_prefers_gaussian(graph, n_records, noise.scale(), exact_inference));
  if (surrogate != nullptr) *surrogate = gaussian;
  return fit(gaussian ? laplace_gaussian_surrogate(noise) : noise);
}

/// The evidence term of a release made by mechanism m: cgm_evidence(m).
template <coordinatewise_mechanism M>
cgm_evidence make_cgm_noise(const M& m) {
  return cgm_evidence(m);
}

}  // namespace privpost
