// privpost/samplers/gibbs_ss_truncated.hpp
// gibbs_ss_truncated: Gibbs-SS for unbounded statistics released after dropping records outside [a, b] (dissertation
// Sec. 4.3). The regions' sums are modelled jointly (multinomial counts, Prop. 5 with cross-covariances); the sampler
// draws the total s and the centre sum s_c together given z, then theta | s by conjugacy, then w | z - s_c.
//
// Starting point. The expected centre sum n E[1[a <= x <= b] t(x)] is not monotone in theta: as theta moves
// far outside [a, b], the records leave the bounds and are dropped, so a small centre sum is explained both by a theta
// near the bounds and by a theta so far out that almost every record is dropped. The posterior then has a second,
// spurious mode with negligible mass (prior weight e^-15 in the normal example), separated from the main mode by a
// valley of depth O(n). Started from a prior draw on the wrong side of the peak of the centre mean, the chain walked
// into that mode and stayed: theta | s moves by O(1/sqrt(n)) per sweep and carries no information about the centre
// there. When the two modes carry comparable mass (a theta between the bounds and one beyond the peak of the centre
// mean), a chain that stays in one of them covers nothing. Two changes fix it: the chain starts from a
// sampling-importance-resampling draw (K prior draws weighted by the collapsed CLT likelihood
// N(z; n q mu_c, Var s_c + E[noise variance])), and every sweep adds a mode-jumping move: an independence
// Metropolis-Hastings proposal theta' from the prior, accepted with probability min(1, L(theta') / L(theta)) where
// L(theta) = N(z; E s_c, Var s_c + diag(w)) is the release's likelihood with s and s_c integrated out given w (the prior
// cancels); (s, s_c) are then drawn from their full conditional given the new theta, as a partially collapsed Gibbs
// sampler requires.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/interval.hpp"
#include "privpost/core/linalg/robust_cholesky.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/families/family_model.hpp"
#include "privpost/families/support.hpp"
#include "privpost/families/truncation.hpp"
#include "privpost/samplers/detail/sweep.hpp"

namespace privpost {

/// Mean n q mu_c and covariance n (q Sigma_c + q (1 - q) mu_c mu_c^T) of the centre sum s_c of n records.
template <truncatable_family F>
void centre_sum_moments(const region_moments<F>& c, double n, statistic_t<F>& mean, covariance_t<F>& cov) {
  const double q = c.probability;
  mean = n * q * c.mean;
  cov = n * (q * c.cov + q * (1.0 - q) * c.mean * c.mean.transpose());
}

/// Joint prior of (s, s_c): s = the sum over all n records, s_c = the sum over records in [a, b]. With per-record
/// t and t_c = 1[x in [a, b]] t: E = (n mu, n q mu_c); Var s = n Sigma (the untruncated family: the three regions'
/// blocks with their multinomial cross-covariances add up to it), Var s_c = n (q Sigma_c + q (1 - q) mu_c mu_c^T),
/// Cov(s, s_c) = n q (Sigma_c + (mu_c - mu) mu_c^T).
template <truncatable_family F>
void total_and_centre_moments(const typename F::parameter_type& theta, const region_moments<F>& c, double n,
                              Eigen::Matrix<double, 2 * F::dimension, 1>& mean,
                              Eigen::Matrix<double, 2 * F::dimension, 2 * F::dimension>& cov) {
  constexpr int d = F::dimension;
  const statistic_t<F> mu = F::mean_statistic(theta);
  const covariance_t<F> sigma = F::covariance_statistic(theta);
  const double q = c.probability;
  mean.template head<d>() = n * mu;
  cov.template topLeftCorner<d, d>() = n * sigma;
  statistic_t<F> centre_mean;
  covariance_t<F> centre_cov;
  centre_sum_moments<F>(c, n, centre_mean, centre_cov);
  mean.template tail<d>() = centre_mean;
  cov.template bottomRightCorner<d, d>() = centre_cov;
  const covariance_t<F> cross = n * q * (c.cov + (c.mean - mu) * c.mean.transpose());
  cov.template topRightCorner<d, d>() = cross;
  cov.template bottomLeftCorner<d, d>() = cross.transpose();
}

/// The same for the centre [a, b] at theta (Lemma 1 for the centre's moments).
template <truncatable_family F>
void total_and_centre_moments(const typename F::parameter_type& theta, double n, double a, double b,
                              Eigen::Matrix<double, 2 * F::dimension, 1>& mean,
                              Eigen::Matrix<double, 2 * F::dimension, 2 * F::dimension>& cov) {
  total_and_centre_moments<F>(theta, truncated_moments<F>(theta, a, b), n, mean, cov);
}

namespace detail {

/// How many prior draws the truncated sampler's starting point is resampled from.
inline constexpr int truncated_start_candidates = 128;
/// How many draws of the mechanism's latent variance estimate its mean when it has no noise_variance() member.
inline constexpr int noise_variance_draws = 256;

/// The mechanism's noise variance per coordinate: noise_variance() when it has one, else the mean of draws of its
/// scale-mixture variance (the same thing, estimated).
template <scale_mixture_noise Mechanism, random_engine G>
double mean_noise_variance(const Mechanism& mechanism, G& g) {
  if constexpr (requires {
                  { mechanism.noise_variance() } -> std::convertible_to<double>;
                }) {
    return mechanism.noise_variance();
  } else {
    double total = 0.0;
    for (int i = 0; i < noise_variance_draws; ++i) total += mechanism.draw_variance(g);
    return total / noise_variance_draws;
  }
}

/// The centre's moments at theta, or nothing when the centre holds no probability there (or theta is not finite).
template <truncatable_family F>
std::optional<region_moments<F>> centre_moments(const typename F::parameter_type& theta, double a, double b) {
  if (!F::natural_parameter(theta).allFinite()) return std::nullopt;
  return try_truncated_moments<F>(theta, a, b);
}

/// log N(z; E s_c, Var s_c + diag(v)) under the CLT model of the centre sum (the release with s and s_c integrated
/// out, given the noise variances v), up to a constant; -inf where the covariance is not positive definite.
template <truncatable_family F>
double collapsed_log_likelihood(const region_moments<F>& c, const statistic_t<F>& z, double n,
                                const statistic_t<F>& noise_variance) {
  statistic_t<F> mean, r;
  covariance_t<F> cov;
  centre_sum_moments<F>(c, n, mean, cov);
  cov.diagonal() += noise_variance;
  Eigen::LLT<covariance_t<F>> llt;
  return collapsed_log_likelihood(z, mean, cov, llt, r);
}

/// The same at theta; -inf where the centre holds no probability.
template <truncatable_family F>
double collapsed_log_likelihood(const typename F::parameter_type& theta, const statistic_t<F>& z, double n, double a, double b,
                                const statistic_t<F>& noise_variance) {
  const auto c = centre_moments<F>(theta, a, b);
  return c ? collapsed_log_likelihood<F>(*c, z, n, noise_variance) : -std::numeric_limits<double>::infinity();
}

/// A starting parameter for the truncated sampler: one of `truncated_start_candidates` prior draws, resampled with
/// weights proportional to the collapsed CLT likelihood (sampling-importance-resampling, an approximate posterior draw).
/// Falls back to the first prior draw when every weight is zero.
template <conjugate_prior Prior, scale_mixture_noise Mechanism, random_engine G>
requires truncatable_family<typename Prior::family>
typename Prior::family::parameter_type truncated_start(const Prior& prior, const Mechanism& mechanism,
                                                       const statistic_t<typename Prior::family>& z, double n, double a, double b,
                                                       G& g) {
  using F = typename Prior::family;
  const statistic_t<F> v = statistic_t<F>::Constant(mean_noise_variance(mechanism, g));
  std::vector<typename F::parameter_type> candidates;
  std::vector<double> log_weights;
  candidates.reserve(truncated_start_candidates);
  log_weights.reserve(truncated_start_candidates);
  double top = -std::numeric_limits<double>::infinity();
  for (int i = 0; i < truncated_start_candidates; ++i) {
    candidates.push_back(prior.draw(g));
    log_weights.push_back(collapsed_log_likelihood<F>(candidates.back(), z, n, a, b, v));
    top = std::max(top, log_weights.back());
  }
  if (!std::isfinite(top)) return candidates.front();
  double total = 0.0;
  for (double& w : log_weights) total += (w = std::exp(w - top));
  double u = draw_uniform(g) * total;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    u -= log_weights[i];
    if (u <= 0.0) return candidates[i];
  }
  return candidates.back();
}

}  // namespace detail

/// Gibbs-SS for a truncated release z of the centre statistic (records outside [a, b] dropped before release).
template <conjugate_prior Prior, scale_mixture_noise Mechanism>
requires truncatable_family<typename Prior::family>
class gibbs_ss_truncated {
 public:
  /// The exponential family.
  using family = typename Prior::family;
  /// The family's parameter type.
  using parameter_type = typename family::parameter_type;
  /// Length of t(x).
  static constexpr int dimension = family::dimension;
  /// Type of t(x) sums.
  using vector_type = statistic_t<family>;
  /// Type of their covariance.
  using matrix_type = covariance_t<family>;
  /// The family's support of the sums.
  using support_type = family_support_t<family>;
  /// Type of the joint (total, centre) statistic.
  using joint_vector = Eigen::Matrix<double, 2 * dimension, 1>;
  /// Type of its covariance.
  using joint_matrix = Eigen::Matrix<double, 2 * dimension, 2 * dimension>;

  /// z: the release of the centre statistic; n: public number of records (dropped ones included); [a, b]: the declared
  /// bounds (a < b). Initialises theta by resampling prior draws with the collapsed CLT likelihood (see the file's
  /// comment), s_c at z projected, s at n E[t], w from the mechanism's prior.
  template <random_engine G>
  gibbs_ss_truncated(const Prior& prior, const Mechanism& mechanism, const Eigen::VectorXd& z, double n, double a, double b, G& g)
      : prior_(prior), mechanism_(mechanism), n_(n), a_(a), b_(b), theta_(prior.draw(g)) {
    detail::check_release("gibbs_ss_truncated", z, dimension, n);
    check_finite("gibbs_ss_truncated", "a", a);
    check_finite("gibbs_ss_truncated", "b", b);
    if (!(a < b)) throw_invalid("gibbs_ss_truncated", "b", b, "a number > a = " + detail::format_value(a));
    check_reachable_centre(mechanism_, z, n, a, b);
    z_ = z;
    theta_ = detail::truncated_start(prior_, mechanism_, z_, n_, a_, b_, g);
    centre_ = z_;
    support_type::project(centre_, n_, events_);
    vector_type mean;
    matrix_type cov;
    family_moments<family>(theta_, mean, cov);
    total_ = n_ * mean;
    support_type::project(total_, n_, events_);
    for (int j = 0; j < dimension; ++j) w_(j) = mechanism_.draw_variance(g);
  }

  /// The rule of mechanisms/reachable.hpp for the centre sum: a record in [a, b] adds t(x), one outside adds nothing, so
  /// coordinate j of the sum lies in n [min(0, min t_j), max(0, max t_j)] over [a, b] (by interval arithmetic where the
  /// family gives its statistic on intervals; else the family's support bounds).
  static void check_reachable_centre(const Mechanism& mechanism, const Eigen::VectorXd& z, double n, double a, double b) {
    if constexpr (generic_statistic_family<family>) {
      const auto box = family::generic_statistic(interval(a, b));
      for (int j = 0; j < dimension; ++j)
        check_reachable("gibbs_ss_truncated", dimension == 1 ? std::string("z") : "z(" + std::to_string(j) + ")", z(j),
                        n * std::min(0.0, box[static_cast<std::size_t>(j)].lo),
                        n * std::max(0.0, box[static_cast<std::size_t>(j)].hi), n, noise_scale(mechanism));
    } else {
      detail::check_reachable_release("gibbs_ss_truncated", support_type{}, mechanism, z, n);
    }
  }

  /// One sweep: theta | s; the mode-jumping move on theta | w, z; (s, s_c) | theta, w, z; w | z - s_c.
  template <random_engine G>
  void step(G& g) {
    theta_ = prior_.update(total_, n_).draw(g);
    // Mode-jumping move: theta' from the prior, accepted by the collapsed likelihood ratio given w (the prior cancels).
    auto current = detail::centre_moments<family>(theta_, a_, b_);
    const parameter_type proposal = prior_.draw(g);
    const auto proposed = detail::centre_moments<family>(proposal, a_, b_);
    ++collapsed_proposals_;
    if (proposed) {
      const double l_new = detail::collapsed_log_likelihood<family>(*proposed, z_, n_, w_);
      const double l_old =
          current ? detail::collapsed_log_likelihood<family>(*current, z_, n_, w_) : -std::numeric_limits<double>::infinity();
      if (detail::accept_collapsed_move(l_old, l_new, g)) {
        theta_ = proposal;
        current = proposed;
        ++collapsed_accepted_;
      }
    }
    // The conjugate draw of theta keeps the centre's probability positive unless it underflows; then Lemma 1 throws.
    if (!current) current = truncated_moments<family>(theta_, a_, b_);
    joint_vector m;
    joint_matrix p;
    total_and_centre_moments<family>(theta_, *current, n_, m, p);
    // Condition the joint normal on z = s_c + e, e ~ N(0, diag(w)): S = Var s_c + W = L L^T.
    matrix_type s = p.template bottomRightCorner<dimension, dimension>();
    s.diagonal() += w_;
    matrix_type l;
    robust_cholesky(s, l, events_);
    const auto tri = l.template triangularView<Eigen::Lower>();
    const Eigen::Matrix<double, dimension, 2 * dimension> bmat = tri.solve(p.template bottomRows<dimension>());
    const joint_vector mean = m + bmat.transpose() * tri.solve(z_ - m.template tail<dimension>());
    joint_matrix cov = p - bmat.transpose() * bmat;
    cov = 0.5 * (cov + cov.transpose()).eval();
    joint_matrix chol;
    robust_cholesky(cov, chol, events_);
    joint_vector x, e;
    detail::draw_with_retries(detail::joint_support<support_type, dimension>{}, n_, x, events_, [&] {
      for (int j = 0; j < 2 * dimension; ++j) e(j) = draw_normal(g);
      x = mean + chol.template triangularView<Eigen::Lower>() * e;
    });
    total_ = x.template head<dimension>();
    centre_ = x.template tail<dimension>();
    detail::redraw_variances(mechanism_, z_, centre_, w_, g);
  }

  /// The current draw of theta.
  const parameter_type& parameter() const noexcept { return theta_; }
  /// The current draw as a vector.
  parameter_vector_t<family> parameter_vector() const { return family_parameter_vector<family>(theta_); }
  /// The current latent statistic of all n records.
  const vector_type& total() const noexcept { return total_; }
  /// The current latent statistic of the records inside the bounds (what was released).
  const vector_type& centre() const noexcept { return centre_; }
  /// The numerical events so far.
  const numerical_events& events() const noexcept { return events_; }
  /// @{
  /// Mode-jumping (collapsed prior-proposal) moves proposed and accepted so far, named and typed as gibbs_ss's
  /// collapsed moves (their ratio is the move's acceptance rate).
  std::uint64_t collapsed_proposals() const noexcept { return collapsed_proposals_; }
  std::uint64_t collapsed_accepted() const noexcept { return collapsed_accepted_; }
  /// @}

 private:
  Prior prior_;
  Mechanism mechanism_;
  double n_, a_, b_;
  vector_type z_;
  parameter_type theta_;
  vector_type total_, centre_, w_;
  numerical_events events_;
  std::uint64_t collapsed_proposals_ = 0, collapsed_accepted_ = 0;
};

}  // namespace privpost
