// privpost/samplers/gibbs_ss_truncated.hpp
// gibbs_ss_truncated: Gibbs-SS for unbounded statistics released after dropping records outside [a, b] (dissertation
// Sec. 4.3). The regions' sums are modelled jointly (multinomial counts, Prop. 5 with cross-covariances): truncation is
// a model, truncated_model<F>, whose statistic is the pair (total s, centre sum s_c), run by gibbs_frame with the
// truncated_sum block, which draws (s, s_c) together given z (only s_c is released), then w | z - s_c; theta | s is
// the family's conjugate update on the total.
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
// sampler requires. That move is the frame's collapsed prior-proposal move (one per sweep by default), with
// truncated_sum's collapsed likelihood.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
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
#include "privpost/samplers/gibbs_frame.hpp"

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

/// Truncation as a model: the statistic of n records released after dropping those outside [a, b] is the pair
/// (s, s_c) of the total over all records and the sum over those inside, with the joint CLT moments of
/// total_and_centre_moments and the family's conjugate update on the total. A statistic_model, run by gibbs_frame with
/// truncated_sum (which knows that only s_c is released).
template <truncatable_family F>
class truncated_model {
 public:
  /// The exponential family.
  using family = F;
  /// The family's parameter type.
  using parameter_type = typename F::parameter_type;
  /// Length of the joint statistic (total, centre).
  static constexpr int static_size = 2 * F::dimension;
  /// Type of the joint statistic.
  using vector_type = Eigen::Matrix<double, static_size, 1>;
  /// Type of its covariance.
  using matrix_type = Eigen::Matrix<double, static_size, static_size>;
  /// Both halves on the family's support.
  using support_type = detail::joint_support<family_support_t<F>, F::dimension>;

  /// The declared bounds [a, b]: finite, a < b; std::invalid_argument naming the value otherwise.
  truncated_model(double a, double b) : a_(a), b_(b) {
    check_finite("gibbs_ss_truncated", "a", a);
    check_finite("gibbs_ss_truncated", "b", b);
    if (!(a < b)) throw_invalid("gibbs_ss_truncated", "b", b, "a number > a = " + detail::format_value(a));
  }

  /// Length of the joint statistic.
  static constexpr Eigen::Index size() noexcept { return static_size; }
  /// Both halves on the family's support.
  static support_type support() noexcept { return {}; }
  /// The parameter as a vector.
  static parameter_vector_t<F> parameter_vector(const parameter_type& theta) { return family_parameter_vector<F>(theta); }
  /// The joint CLT moments of (s, s_c) (total_and_centre_moments); std::domain_error where the centre holds no
  /// probability at theta (Lemma 1).
  void moments(const parameter_type& theta, double n, vector_type& mean, matrix_type& cov) const {
    total_and_centre_moments<F>(theta, n, a_, b_, mean, cov);
  }
  /// Conjugate-Update on the total s (the first half).
  template <conjugate_prior Prior>
  requires std::same_as<typename Prior::family, F>
  static Prior update(const Prior& prior, const vector_type& s, double n) {
    return prior.update(s.template head<F::dimension>(), n);
  }
  /// @{
  /// The declared bounds.
  double lower() const noexcept { return a_; }
  double upper() const noexcept { return b_; }
  /// @}

 private:
  double a_, b_;
};

/// The sum block of a truncated release: (s, s_c) | theta, w, z from their joint CLT normal conditioned on
/// z = s_c + e, e ~ N(0, diag(w)), on the family's support (bounded retries, then a counted projection), and
/// w | z - s_c. Its collapsed likelihood, N(z; E s_c, Var s_c + diag(w)), drives the frame's mode-jumping move; its
/// start resamples prior draws by that likelihood (see the file's comment). Draws allocate nothing.
template <truncatable_family F, scale_mixture_noise Mechanism>
class truncated_sum {
 public:
  /// Length of t(x).
  static constexpr int dimension = F::dimension;
  /// The model it draws for.
  using model_type = truncated_model<F>;
  /// Type of t(x) sums.
  using vector_type = statistic_t<F>;
  /// Type of their covariance.
  using matrix_type = covariance_t<F>;

  /// The mechanism and its release z of the centre statistic (checked in start()).
  truncated_sum(const Mechanism& mechanism, const Eigen::VectorXd& z) : mechanism_(mechanism), release_(z) {}

  /// Checks the release (size, finite entries, n, reachability), resamples theta's start from prior draws, sets s_c at
  /// z projected, s at n E[t] projected, and w from the mechanism's prior.
  template <class Prior, random_engine G>
  void start(const model_type& model, const Prior& prior, typename F::parameter_type& theta, double n,
             typename model_type::vector_type& s, numerical_events& events, G& g) {
    detail::check_release("gibbs_ss_truncated", release_, dimension, n);
    check_reachable_centre(mechanism_, release_, n, model.lower(), model.upper());
    z_ = release_;
    theta = detail::truncated_start(prior, mechanism_, z_, n, model.lower(), model.upper(), g);
    vector_type centre = z_;
    family_support_t<F>::project(centre, n, events);
    vector_type mean, total;
    matrix_type cov;
    family_moments<F>(theta, mean, cov);
    total = n * mean;
    family_support_t<F>::project(total, n, events);
    s.template head<dimension>() = total;
    s.template tail<dimension>() = centre;
    for (int j = 0; j < dimension; ++j) w_(j) = mechanism_.draw_variance(g);
  }

  /// The rule of mechanisms/reachable.hpp for the centre sum: a record in [a, b] adds t(x), one outside adds nothing, so
  /// coordinate j of the sum lies in n [min(0, min t_j), max(0, max t_j)] over [a, b] (by interval arithmetic where the
  /// family gives its statistic on intervals; else the family's support bounds).
  static void check_reachable_centre(const Mechanism& mechanism, const Eigen::VectorXd& z, double n, double a, double b) {
    if constexpr (generic_statistic_family<F>) {
      const auto box = F::generic_statistic(interval(a, b));
      for (int j = 0; j < dimension; ++j)
        check_reachable("gibbs_ss_truncated", dimension == 1 ? std::string("z") : "z(" + std::to_string(j) + ")", z(j),
                        n * std::min(0.0, box[static_cast<std::size_t>(j)].lo),
                        n * std::max(0.0, box[static_cast<std::size_t>(j)].hi), n, noise_scale(mechanism));
    } else {
      detail::check_reachable_release("gibbs_ss_truncated", family_support_t<F>{}, mechanism, z, n);
    }
  }

  /// (s, s_c) | theta, w, z.
  template <random_engine G>
  void draw_sum(const model_type& model, const typename F::parameter_type& theta, double n, typename model_type::vector_type& x,
                numerical_events& events, G& g) {
    typename model_type::vector_type m;
    typename model_type::matrix_type p;
    // model.moments(theta, n, m, p), with the centre's moments the collapsed move has computed at theta already.
    const auto& centre = centre_at(theta, model);
    total_and_centre_moments<F>(theta, centre ? *centre : truncated_moments<F>(theta, model.lower(), model.upper()), n, m, p);
    // Condition the joint normal on z = s_c + e, e ~ N(0, diag(w)): S = Var s_c + W = L L^T.
    matrix_type s = p.template bottomRightCorner<dimension, dimension>();
    s.diagonal() += w_;
    matrix_type l;
    robust_cholesky(s, l, events);
    const auto tri = l.template triangularView<Eigen::Lower>();
    const Eigen::Matrix<double, dimension, 2 * dimension> bmat = tri.solve(p.template bottomRows<dimension>());
    const typename model_type::vector_type mean = m + bmat.transpose() * tri.solve(z_ - m.template tail<dimension>());
    typename model_type::matrix_type cov = p - bmat.transpose() * bmat;
    cov = 0.5 * (cov + cov.transpose()).eval();
    typename model_type::matrix_type chol;
    robust_cholesky(cov, chol, events);
    typename model_type::vector_type e;
    detail::draw_with_retries(model.support(), n, x, events, [&] {
      for (int j = 0; j < 2 * dimension; ++j) e(j) = draw_normal(g);
      x = mean + chol.template triangularView<Eigen::Lower>() * e;
    });
  }

  /// w | z - s_c (nothing for a fixed-variance mechanism).
  template <random_engine G>
  void draw_variances(const typename model_type::vector_type& x, G& g) {
    detail::redraw_variances(mechanism_, z_, x.template tail<dimension>(), w_, g);
  }

  /// log N(z; E s_c, Var s_c + diag(w)) up to a constant; -infinity where the centre holds no probability at theta.
  double collapsed_log_likelihood(const model_type& model, const typename F::parameter_type& theta, double n) {
    const auto& centre = centre_at(theta, model);
    return centre ? detail::collapsed_log_likelihood<F>(*centre, z_, n, w_) : -std::numeric_limits<double>::infinity();
  }

  /// The current noise variances w.
  const vector_type& variances() const noexcept { return w_; }

 private:
  // The centre's moments (Lemma 1: incomplete gamma or erfc terms, the sweep's main cost) at the last two parameters
  // evaluated: the collapsed move evaluates the current theta and its proposal, and the sum draw then needs the one
  // kept, so a sweep computes them twice instead of three times. Keyed by the parameter vector; nothing when the
  // centre holds no probability there.
  struct cached_centre {
    parameter_vector_t<F> key = parameter_vector_t<F>::Zero();
    std::optional<region_moments<F>> moments;
    bool valid = false;
  };
  const std::optional<region_moments<F>>& centre_at(const typename F::parameter_type& theta, const model_type& model) {
    const parameter_vector_t<F> key = family_parameter_vector<F>(theta);
    for (const cached_centre& c : cache_)
      if (c.valid && c.key == key) return c.moments;
    cached_centre& c = cache_[next_];
    next_ = 1 - next_;
    c.key = key;
    c.moments = detail::centre_moments<F>(theta, model.lower(), model.upper());
    c.valid = true;
    return c.moments;
  }

  Mechanism mechanism_;
  Eigen::VectorXd release_;
  vector_type z_ = vector_type::Zero(), w_ = vector_type::Zero();
  std::array<cached_centre, 2> cache_;
  std::size_t next_ = 0;
};

/// Gibbs-SS for a truncated release z of the centre statistic (records outside [a, b] dropped before release):
/// gibbs_frame over truncated_model<F> with truncated_sum and one mode-jumping collapsed move per sweep.
template <conjugate_prior Prior, scale_mixture_noise Mechanism>
requires truncatable_family<typename Prior::family>
class gibbs_ss_truncated
    : public gibbs_frame<truncated_model<typename Prior::family>, Prior, truncated_sum<typename Prior::family, Mechanism>> {
  using frame = gibbs_frame<truncated_model<typename Prior::family>, Prior, truncated_sum<typename Prior::family, Mechanism>>;

 public:
  /// The exponential family.
  using family = typename Prior::family;
  /// The family's parameter type.
  using parameter_type = typename family::parameter_type;
  /// Length of t(x).
  static constexpr int dimension = family::dimension;
  /// Type of t(x) sums.
  using vector_type = statistic_t<family>;
  /// Type of the joint (total, centre) statistic.
  using joint_vector = typename truncated_model<family>::vector_type;

  /// z: the release of the centre statistic; n: public number of records (dropped ones included); [a, b]: the declared
  /// bounds (a < b). Initialises theta by resampling prior draws with the collapsed CLT likelihood (see the file's
  /// comment), s_c at z projected, s at n E[t], w from the mechanism's prior.
  template <random_engine G>
  gibbs_ss_truncated(const Prior& prior, const Mechanism& mechanism, const Eigen::VectorXd& z, double n, double a, double b, G& g)
      : frame(
            truncated_model<family>(a, b), prior, [&] { return truncated_sum<family, Mechanism>(mechanism, z); }, n, g) {
    this->set_collapsed_moves(1);
  }

  /// The current latent statistic of all n records.
  vector_type total() const { return frame::statistic().template head<dimension>(); }
  /// The current latent statistic of the records inside the bounds (what was released).
  vector_type centre() const { return frame::statistic().template tail<dimension>(); }
};

}  // namespace privpost
