// privpost/core/concepts.hpp
// Every user-facing concept of privpost in one place, with the customisation points a user may provide (docs/concepts.md;
// mp-units and stdexec style). tests/core/concepts_test.cpp holds a positive and a negative static_assert each.
#pragma once

#include <Eigen/Core>
#include <array>
#include <concepts>
#include <cstddef>
#include <limits>
#include <random>
#include <ranges>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "privpost/core/interval.hpp"
#include "privpost/core/numerical_events.hpp"

// clang-format 14 misformats concept definitions (requires-expressions as comparisons): this file is laid out by hand.
// clang-format off
namespace privpost {

// ---------------------------------------------------------------------------------------------------------------------
// Randomness
// ---------------------------------------------------------------------------------------------------------------------

/// Any uniform random bit generator (std::mt19937_64, privpost::os_random_engine, a user's PCG, ...).
template <class G>
concept random_engine = std::uniform_random_bit_generator<std::remove_cvref_t<G>>;

// ---------------------------------------------------------------------------------------------------------------------
// Release mechanisms
// ---------------------------------------------------------------------------------------------------------------------

/// Opt-in tag: a type that declares `using mechanism_category = privpost::mechanism_tag;` promises that its release()
/// satisfies the privacy budget it reports.
struct mechanism_tag {};

/// (epsilon, delta) of a release; delta = 0 for pure epsilon-DP.
struct privacy_budget {
  /// Privacy loss epsilon, >= 0.
  double epsilon = 0.0;
  /// Failure probability delta, in [0, 1); 0 for pure epsilon-DP.
  double delta = 0.0;
  /// Equal when epsilon and delta are equal.
  friend bool operator==(const privacy_budget&, const privacy_budget&) = default;
};

/// Opt-in from outside a type (for a type you do not own): specialise
///   template <> inline constexpr bool privpost::enable_release_mechanism<their::mechanism> = true;
/// The default is true exactly for types carrying the member tag `mechanism_category = mechanism_tag`.
namespace detail {
template <class M>
concept has_mechanism_tag = requires { typename M::mechanism_category; } &&
                            std::same_as<typename M::mechanism_category, mechanism_tag>;
}  // namespace detail
template <class M>
inline constexpr bool enable_release_mechanism = detail::has_mechanism_tag<M>;

/// A release mechanism: z = release(s, g) adds noise to a vector of statistics; log_likelihood(z, s) is log p(z | s);
/// budget() reports its privacy guarantee. Requires the explicit opt-in (member tag or enable_release_mechanism).
template <class M>
concept release_mechanism =
    enable_release_mechanism<std::remove_cvref_t<M>> &&
    requires(const M& m, const typename M::vector_type& s, std::mt19937_64& g) {
      typename M::vector_type;
      { m.release(s, g) } -> std::same_as<typename M::vector_type>;
      { m.log_likelihood(s, s) } -> std::convertible_to<double>;
      { m.budget() } -> std::same_as<privacy_budget>;
    };

/// Optional customisation point of a release mechanism: log_density_change(z, s, s_new) = log p(z | s_new) -
/// log p(z | s), computed without the normalising constants (a coordinate that did not change adds 0; docs/record-level.md;
/// the record-level samplers call it once per proposed record). laplace_mechanism and gaussian_mechanism provide
/// it; a mechanism without it is served by two log_likelihood calls (privpost::log_density_change below).
template <class M>
concept density_change_mechanism =
    release_mechanism<M> && requires(const M& m, const typename M::vector_type& z, const typename M::vector_type& s) {
  { m.log_density_change(z, s, s) } -> std::convertible_to<double>;
};

/// Optional customisation point of a release mechanism: zcdp_rho() = rho such that the mechanism is rho-zero-concentrated
/// DP (Bun & Steinke 2016, Def. 1.1), the view under which privacy_accountant composes Gaussian-type noise tightly.
/// gaussian_mechanism provides it (L2 sensitivity D and sd sigma: rho = D^2 / (2 sigma^2), their Prop. 1.6); a pure
/// epsilon-DP mechanism needs none (it is epsilon^2 / 2-zCDP, their Prop. 1.4; privpost::zcdp_rho below).
template <class M>
concept zcdp_mechanism = release_mechanism<M> && requires(const M& m) {
  { m.zcdp_rho() } -> std::convertible_to<double>;
};

/// The zCDP parameter rho of mechanism m: its own zcdp_rho() when it has one; epsilon^2 / 2 for a pure epsilon-DP
/// mechanism (delta = 0); +infinity (no zCDP view) otherwise.
template <release_mechanism M>
double zcdp_rho(const M& m) {
  if constexpr (zcdp_mechanism<M>) {
    return static_cast<double>(m.zcdp_rho());
  } else {
    const privacy_budget b = m.budget();
    return b.delta == 0.0 ? 0.5 * b.epsilon * b.epsilon : std::numeric_limits<double>::infinity();
  }
}

/// log p(z | s_new) - log p(z | s) under mechanism m: its own log_density_change when it has one, else the difference
/// of two log_likelihood calls.
template <release_mechanism M, class Z, class S, class SNew>
double log_density_change(const M& m, const Z& z, const S& s, const SNew& s_new) {
  if constexpr (density_change_mechanism<M>)
    return m.log_density_change(z, s, s_new);
  else
    return m.log_likelihood(z, s_new) - m.log_likelihood(z, s);
}

/// A mechanism whose noise is a Gaussian scale mixture: z | s, w ~ N(s, diag(w)). It draws w from its prior and redraws
/// one coordinate's variance given the residual z_j - s_j (the key trick of Gibbs-SS: dissertation App. B.2). `fixed_variance` is true when w is
/// a constant (Gaussian noise), so samplers may skip the redraw. Optional: noise_variance() (E[w], else estimated).
template <class M>
concept scale_mixture_noise = release_mechanism<M> && requires(const M& m, double residual, std::mt19937_64& g) {
  { m.draw_variance(g) } -> std::convertible_to<double>;
  { m.redraw_variance(residual, g) } -> std::convertible_to<double>;
  { M::fixed_variance } -> std::convertible_to<bool>;
};

/// A scale_mixture_noise mechanism whose noise is exactly that mixture on the real line, so that it splits into K
/// independent parts (z - s = e_1 + ... + e_K, e_k | w ~ N(0, w / K)): the Laplace and Gaussian mechanisms, not the
/// discrete ones (whose mixture view is a continuous approximation of noise on a lattice). Opt-in: a static constexpr
/// bool exact_scale_mixture = true. The sharded record-level sampler (samplers/record_sharded.hpp) needs it.
template <class M>
concept exact_scale_mixture_noise = scale_mixture_noise<M> && requires {
  requires static_cast<bool>(M::exact_scale_mixture);
};

/// A mechanism calibrated to a sensitivity: l1_sensitivity() or l2_sensitivity() reports what it was built for, so that
/// release_statistic can refuse a statistic whose sensitivity from the declared bounds is larger.
template <class M>
concept sensitivity_calibrated = release_mechanism<M> && (requires(const M& m) {
  { m.l1_sensitivity() } -> std::convertible_to<double>;
} || requires(const M& m) {
  { m.l2_sensitivity() } -> std::convertible_to<double>;
});

/// Builds a mechanism from the (L1, L2) sensitivity of a statistic (used where the sensitivity is known only after
/// the bounds are declared, as in the truncated release).
template <class F>
concept mechanism_factory = requires(const F& f, double l1, double l2) {
  requires release_mechanism<std::remove_cvref_t<std::invoke_result_t<const F&, double, double>>>;
};

/// A per-record statistic t: std::array<T, P> -> std::array<T, D>, generic in T so that it can be evaluated on doubles
/// (the data) and on privpost::interval (the bounds, for the sensitivity). Write x^2 as square(x) for a tight bound.
template <class F, std::size_t P>
concept per_record_statistic = requires(const F& f, const std::array<double, P>& x, const std::array<interval, P>& box) {
  { f(x) } -> std::same_as<std::array<double, std::tuple_size_v<std::remove_cvref_t<decltype(f(x))>>>>;
  { f(box) } -> std::same_as<std::array<interval, std::tuple_size_v<std::remove_cvref_t<decltype(f(x))>>>>;
};

// ---------------------------------------------------------------------------------------------------------------------
// Valid sets of sums (support policies) and the latent-statistic model every Gibbs-type sampler runs on
// ---------------------------------------------------------------------------------------------------------------------

/// The set of statistics n records can sum to, and a projection onto it. Ready-made: simplex_support, nonnegative_orthant,
/// real_space, mean_square_support (families/support.hpp) and gram_support (families/regression/gram_support.hpp).
///   contains(s, n)            s is a possible sum of n records
///   project(s, n, events)     moves s onto the set in place; true if it changed (repairs counted in events)
///   rejection_tries           draws outside the set are retried this many times before the projection (0: project)
template <class P, class V>
concept support_policy = requires(const P& p, const V& cs, V& s, double n, numerical_events& events) {
  { p.contains(cs, n) } -> std::convertible_to<bool>;
  { p.project(s, n, events) } -> std::convertible_to<bool>;
  { P::rejection_tries } -> std::convertible_to<int>;
};

/// A support that bounds every coordinate of the sum of n records by [lower(n), upper(n)] (the valid set may be smaller,
/// as the simplex is). For one statistic Gibbs-SS draws from it by an exact truncated normal; for any size the samplers
/// refuse a release farther than max_noise_scales_outside noise scales outside it (mechanisms/reachable.hpp).
template <class P>
concept interval_support = requires(const P& p, double n) {
  { p.lower(n) } -> std::convertible_to<double>;
  { p.upper(n) } -> std::convertible_to<double>;
};

/// What a conjugate update needs of a model (conjugate_sampler: the naive and non-private baselines).
///   parameter_type, vector_type     a parameter value; the statistic (fixed-size or dynamic Eigen vector)
///   size()                          size of the statistic
///   support()                       the valid set of sums (a support_policy)
///   parameter_vector(theta)         the parameter as the vector posteriors store
template <class M>
concept conjugate_model = requires(const M& m, const typename M::parameter_type& theta) {
  typename M::parameter_type;
  typename M::vector_type;
  { m.size() } -> std::convertible_to<Eigen::Index>;
  { m.parameter_vector(theta) } -> std::convertible_to<Eigen::VectorXd>;
  requires support_policy<std::remove_cvref_t<decltype(m.support())>, typename M::vector_type>;
};

/// The latent-statistic model: what Gibbs-SS needs to know about s = sum_i t(x_i) given the parameter. A conjugate_model
/// and:
///   matrix_type                     the covariance type of the statistic
///   static_size                     size of the statistic at compile time, or Eigen::Dynamic
///   moments(theta, n, mean, cov)    CLT moments of the sum of n records, n mu(theta) and n Sigma(theta), in one call
/// Optional, detected with requires: update_nuisance(s, n, g) redraws parameters of the model itself given the latent
/// statistic (the covariates' normal-inverse-Wishart block of Gibbs-SS-Update).
template <class M>
concept statistic_model =
    conjugate_model<M> && requires(const M& m, const typename M::parameter_type& theta, double n, typename M::vector_type& mean,
                                   typename M::matrix_type& cov) {
      typename M::matrix_type;
      { M::static_size } -> std::convertible_to<int>;
      m.moments(theta, n, mean, cov);
    };

/// A statistic_model whose covariance n Sigma(theta) is singular by construction (statistics under linear constraints,
/// such as the consistent edge tables of a tree CGM, families/graphical/tree_cgm_model.hpp): it declares
///   static constexpr bool semidefinite_covariance = true;
/// and Gibbs-SS then draws s by Matheron's rule (core/linalg/norm_product.hpp, matheron_draw), which keeps s on the
/// constraints' affine set and never factorises the singular conditional covariance. Dynamic-size models only.
template <class M>
concept semidefinite_statistic_model = statistic_model<M> && std::same_as<typename M::vector_type, Eigen::VectorXd> &&
                                       std::same_as<typename M::matrix_type, Eigen::MatrixXd> &&
                                       requires { requires M::semidefinite_covariance; };

/// Optional, for a semidefinite_statistic_model: m.draw_normal_statistic(theta, n, g, x) sets x to one draw of
/// N(n m(theta), n Sigma(theta)), the law moments() describes, by the model's own construction (the tree CGM's: down
/// the tree, O(d)). Gibbs-SS then skips the O(d^3) factorisation of the singular covariance that Matheron's rule would
/// otherwise need for that draw (matheron_update instead of matheron_draw).
template <class M, class G>
concept normal_drawing_model = semidefinite_statistic_model<M> && random_engine<G> &&
                               requires(const M& m, const typename M::parameter_type& theta, double n, G& g, Eigen::VectorXd& x) {
                                 m.draw_normal_statistic(theta, n, g, x);
                               };

/// Optional, for the exact sum blocks of gibbs_frame (enumerated_sum, window_sum, corrected_sum): a statistic_model of
/// one number, the sum of n records, that lives on the non-negative integers with the closed-form law
/// exp(m.log_sum_probability(s, n, theta)) (NaN or -infinity where s is impossible). An integer-sum law is a model's
/// optional point: family_model<F> forwards F's (the binomial's Binomial(n, theta), the Poisson's Poisson(n lambda)),
/// and a user's model declares its own. The blocks read the sum's mean from moments().
template <class M>
concept integer_sum_model = statistic_model<M> && M::static_size == 1 &&
                            requires(const M& m, double s, double n, const typename M::parameter_type& theta) {
                              { m.log_sum_probability(s, n, theta) } -> std::convertible_to<double>;
                            };

/// An integer_sum_model whose support ends at m.sum_upper(n) (the binomial's n): enumerated_sum enumerates it whole.
template <class M>
concept finite_sum_model = integer_sum_model<M> && requires(const M& m, double n) {
  { m.sum_upper(n) } -> std::convertible_to<double>;
};

/// Optional, detected by the exact sum blocks: an integer_sum_model whose sum law is h_n(s) exp(eta s - n A(eta)) with
/// eta = m.natural_parameter(theta)(0), as for the sum of n records of an exponential family. The blocks then compute
/// h_n once and each sweep adds eta s, instead of calling log_sum_probability (log-gamma terms) at every point.
template <class M>
concept natural_sum_model = integer_sum_model<M> && requires(const M& m, const typename M::parameter_type& theta) {
  { m.natural_parameter(theta) } -> std::convertible_to<typename M::vector_type>;
};

/// A model with a nuisance block that Gibbs-SS updates each sweep (detected, never required).
template <class M>
concept has_nuisance = statistic_model<M> && requires(M& m, const typename M::vector_type& s, double n, std::mt19937_64& g) {
  m.update_nuisance(s, n, g);
};

/// A conjugate prior of a model: m.update(p, s, n) is Conjugate-Update(lambda, s, n) (dissertation Sec. 4.1), a value of
/// the same type; p.draw(g) draws a parameter.
template <class P, class M>
concept conjugate_prior_for = conjugate_model<M> &&
                              requires(const P& p, const M& m, const typename M::vector_type& s, double n, std::mt19937_64& g) {
                                { m.update(p, s, n) } -> std::same_as<P>;
                                { p.draw(g) } -> std::convertible_to<typename M::parameter_type>;
                              };

/// Optional, detected by gibbs_ss: the conjugate update written into an existing posterior, m.update(p, s, n, out),
/// reusing out's storage (how a dynamic-size model's sweep avoids allocating; linear_regression_model has it).
template <class M, class P>
concept in_place_update = conjugate_prior_for<P, M> &&
                          requires(const M& m, const P& p, const typename M::vector_type& s, double n, P& out) {
                            m.update(p, s, n, out);
                          };

/// Optional, detected by gibbs_ss: a draw written into an existing parameter, p.draw(g, theta), reusing its storage.
template <class P, class Theta>
concept in_place_draw = requires(const P& p, std::mt19937_64& g, Theta& theta) { p.draw(g, theta); };

/// Optional, detected by gibbs_ss's collapsed moves: a prior that is a product of independent blocks in some
/// parametrisation of theta. p.blocks() counts them; p.draw_block(g, b, theta) redraws block b (in [0, blocks())) from
/// its prior and leaves the others as they are, so the proposal is reversible with respect to the prior and a
/// Metropolis-Hastings move built on it accepts by the likelihood ratio alone (hyper_dirichlet: each root marginal and
/// each conditional row of the tree). Without it the whole parameter is proposed from the prior at once.
template <class P, class Theta>
concept blocked_prior = requires(const P& p, std::mt19937_64& g, Theta& theta, int b) {
                          { p.blocks() } -> std::convertible_to<int>;
                          p.draw_block(g, b, theta);
                        };

/// Proposals of a Metropolis-Hastings move made and accepted (a model's joint moves report them; see shift_moving_model).
struct move_tally {
  /// @{
  /// Counts.
  int proposed = 0;
  int accepted = 0;
  /// @}
};

/// Optional, detected by gibbs_ss: a model with joint Metropolis-Hastings moves of (theta, s) given the release z under
/// a scale_mixture_noise mechanism with its noise variances integrated out (its log_likelihood), m.shift_move(prior,
/// theta, s, z, mechanism, n, g) -> move_tally, leaving invariant the joint law whose theta | s is the model's conjugate
/// update (tree_cgm_model: random-walk rows with the tables translated along).
template <class M, class P, class Mechanism>
concept shift_moving_model = scale_mixture_noise<Mechanism> &&
                             requires(const M& m, const P& p, typename M::parameter_type& theta,
                                      typename M::vector_type& s, const typename M::vector_type& z,
                                      const Mechanism& mechanism, double n, std::mt19937_64& g) {
                               { m.shift_move(p, theta, s, z, mechanism, n, g) } -> std::same_as<move_tally>;
                             };

// ---------------------------------------------------------------------------------------------------------------------
// Exponential families as static traits (adapted to statistic_model by family_model<F>, families/family_model.hpp)
// ---------------------------------------------------------------------------------------------------------------------

namespace detail {
template <class F>
concept family_with_support_type = requires { typename F::support_type; } &&
                                   support_policy<typename F::support_type, Eigen::Matrix<double, F::dimension, 1>>;
// The four static members of privpost 0.1 still describe a valid set (adapted by family_model).
template <class F>
concept family_with_static_bounds = requires(const Eigen::Matrix<double, F::dimension, 1>& s, double n) {
  { F::lower_bound(n) } -> std::convertible_to<Eigen::Matrix<double, F::dimension, 1>>;
  { F::upper_bound(n) } -> std::convertible_to<Eigen::Matrix<double, F::dimension, 1>>;
  { F::is_valid(s, n) } -> std::convertible_to<bool>;
  { F::project(s, n) } -> std::convertible_to<Eigen::Matrix<double, F::dimension, 1>>;
};
template <class F>
concept family_with_moments = requires(const typename F::parameter_type& theta, Eigen::Matrix<double, F::dimension, 1>& mean,
                                       Eigen::Matrix<double, F::dimension, F::dimension>& cov) {
  { F::mean_statistic(theta) } -> std::convertible_to<Eigen::Matrix<double, F::dimension, 1>>;
  { F::covariance_statistic(theta) } -> std::convertible_to<Eigen::Matrix<double, F::dimension, F::dimension>>;
} || requires(const typename F::parameter_type& theta, Eigen::Matrix<double, F::dimension, 1>& mean,
              Eigen::Matrix<double, F::dimension, F::dimension>& cov) { F::moments(theta, mean, cov); };
template <class F>
concept family_with_vector = std::is_arithmetic_v<typename F::parameter_type> || requires(const typename F::parameter_type& theta) {
  { F::to_vector(theta) } -> std::convertible_to<Eigen::Matrix<double, F::parameter_dimension, 1>>;
};
}  // namespace detail

/// An exponential family p(x | theta) = h(x) exp(eta(theta)^T t(x) - A(eta)) with a D-dimensional statistic, as static
/// traits. Customisation points:
///   dimension, parameter_dimension       compile-time sizes of t(x) and of the parameter vector
///   record_type, parameter_type          one record, one parameter value
///   statistic(x)                         t(x) for one record
///   mean_statistic(theta) and covariance_statistic(theta), or moments(theta, mean, cov)   E[t(x)], Var[t(x)]
///   support_type                         the valid set of sums: pick a support policy (families/support.hpp)
///                                        (or, as in 0.1, lower_bound, upper_bound, is_valid, project)
///   to_vector(theta)                     the parameter as a vector (not needed when parameter_type is a number)
/// Optional: draw_record(theta, g) (simulation studies), generic_statistic(x) (truncated release), and the truncation
/// and autodiff points of truncatable_family and log_partition_family.
template <class F>
concept exponential_family = requires(const typename F::record_type& x) {
  typename F::record_type;
  typename F::parameter_type;
  requires F::dimension >= 1;
  requires F::parameter_dimension >= 1;
  { F::statistic(x) } -> std::convertible_to<Eigen::Matrix<double, F::dimension, 1>>;
} && detail::family_with_moments<F> && detail::family_with_vector<F> &&
                             (detail::family_with_support_type<F> || detail::family_with_static_bounds<F>);

/// Shorthands for a family's fixed-size vector and matrix types.
template <exponential_family F>
using statistic_t = Eigen::Matrix<double, F::dimension, 1>;
template <exponential_family F>
using covariance_t = Eigen::Matrix<double, F::dimension, F::dimension>;
template <exponential_family F>
using parameter_vector_t = Eigen::Matrix<double, F::parameter_dimension, 1>;

/// A conjugate prior of a static family: update(s, n) is Conjugate-Update(lambda, s, n) and returns the posterior as a
/// value of the same type; draw(g) draws a parameter.
template <class P>
concept conjugate_prior = exponential_family<typename P::family> &&
                          requires(const P& p, const Eigen::Matrix<double, P::family::dimension, 1>& s, double n,
                                   std::mt19937_64& g) {
                            { p.update(s, n) } -> std::same_as<P>;
                            { p.draw(g) } -> std::convertible_to<typename P::family::parameter_type>;
                          };

/// Optional, for exact samplers (samplers/gibbs_ss_exact.hpp): a one-dimensional family whose sum of n records lives
/// on the integers {0, ..., F::sum_upper(n)} with the closed-form law exp(F::log_sum_probability(s, n, theta))
/// (binomial: Binomial(n, theta)). Being the sum of n records of the family, that law is h_n(s) exp(eta s - n A(eta))
/// with eta = F::natural_parameter(theta), which the sampler uses to skip h_n's log-gamma terms in every sweep.
template <class F>
concept finite_sum_family = exponential_family<F> && F::dimension == 1 &&
                            requires(double s, double n, const typename F::parameter_type& theta) {
                              { F::sum_upper(n) } -> std::convertible_to<double>;
                              { F::log_sum_probability(s, n, theta) } -> std::convertible_to<double>;
                              { F::natural_parameter(theta) } -> std::convertible_to<statistic_t<F>>;
                            };

/// Optional, for the windowed exact sampler (samplers/gibbs_ss_window.hpp): a one-dimensional family whose sum of n
/// records lives on the non-negative integers with the closed-form law exp(F::log_sum_probability(s, n, theta)),
/// log-concave in s, and mean n F::mean_statistic(theta) (Poisson: Poisson(n lambda); the binomial too, whose support
/// ends at F::sum_upper(n)). Unlike finite_sum_family the support may be unbounded.
template <class F>
concept integer_sum_family = exponential_family<F> && F::dimension == 1 &&
                             requires(double s, double n, const typename F::parameter_type& theta) {
                               { F::log_sum_probability(s, n, theta) } -> std::convertible_to<double>;
                               { F::mean_statistic(theta) } -> std::convertible_to<statistic_t<F>>;
                             };

/// A family that can simulate one record (simulation-based calibration, the record-level samplers).
template <class F>
concept record_generating_family = exponential_family<F> && requires(const typename F::parameter_type& theta, std::mt19937_64& g) {
  { F::draw_record(theta, g) } -> std::convertible_to<typename F::record_type>;
};

/// A scalar-record family whose statistic is also given generically (on doubles and on intervals), so that a truncated
/// release can compute its sensitivity from the declared bounds.
template <class F>
concept generic_statistic_family = exponential_family<F> && requires(const double& x, const interval& box) {
  { F::generic_statistic(x) } -> std::convertible_to<std::array<double, F::dimension>>;
  { F::generic_statistic(box) } -> std::convertible_to<std::array<interval, F::dimension>>;
};

/// A family whose records can be truncated to [a, b] (dissertation Sec. 4.3, Lemma 1): log P(v <= x <= w | theta) as a
/// template over the scalar type (doubles and autodiff variables), its natural parameter, and whether records are
/// integers (the region ends are then shifted by one half).
template <class F>
concept truncatable_family = exponential_family<F> &&
                             requires(const std::array<double, F::dimension>& eta, const typename F::parameter_type& theta,
                                      double v, double w) {
                               { F::log_region_probability(theta, eta, v, w) } -> std::convertible_to<double>;
                               { F::discrete } -> std::convertible_to<bool>;
                               { F::natural_parameter(theta) } -> std::convertible_to<statistic_t<F>>;
                             };

namespace detail {
template <class F>
concept log_partition_of_eta = requires(const std::array<double, F::dimension>& eta) {
  { F::log_partition(eta) } -> std::convertible_to<double>;
};
template <class F>
concept log_partition_of_theta_eta = requires(const typename F::parameter_type& theta, const std::array<double, F::dimension>& eta) {
  { F::log_partition(theta, eta) } -> std::convertible_to<double>;
};
}  // namespace detail

/// A family that gives A(eta) as `template <class T> static T log_partition(const std::array<T, dimension>& eta)`
/// (or, when A needs known constants carried by the parameter, `log_partition(theta, eta)`; derivatives are in eta only)
/// and `natural_parameter(theta)`.
template <class F>
concept log_partition_family =
    exponential_family<F> && (detail::log_partition_of_eta<F> || detail::log_partition_of_theta_eta<F>) &&
    requires(const typename F::parameter_type& theta) {
      { F::natural_parameter(theta) } -> std::convertible_to<Eigen::Matrix<double, F::dimension, 1>>;
    };

// ---------------------------------------------------------------------------------------------------------------------
// Regression covariates
// ---------------------------------------------------------------------------------------------------------------------

/// Where Gibbs-SS for regression gets the covariates' moments: moments() returns a covariate_moments
/// (families/regression/covariate_moments.hpp). Optional, detected: update(layout, gram, n, g), a nuisance update
/// (hierarchical_normal_covariates).
template <class C>
concept covariate_model = requires(const C& c) {
  { c.moments().p } -> std::convertible_to<int>;
  { c.moments().m2 } -> std::convertible_to<Eigen::MatrixXd>;
};

// ---------------------------------------------------------------------------------------------------------------------
// Samplers, adaptive samplers, calibration studies
// ---------------------------------------------------------------------------------------------------------------------

/// A Markov chain (or independent sampler): step(g) advances it, parameter_vector() reads the current parameter,
/// events() its numerical repairs. Optional, detected by the driver: end_warmup(), called once after burn-in (adaptive
/// samplers freeze their step size and mass matrix there).
template <class S, class G = std::mt19937_64>
concept sampler = random_engine<G> && requires(S& s, const S& cs, G& g) {
  s.step(g);
  { cs.parameter_vector() } -> std::convertible_to<Eigen::VectorXd>;
  { cs.events() } -> std::convertible_to<numerical_events>;
};

/// A sampler whose model carries a covariate law sampled with it: c.model().covariates() with mean() (mu_x) and
/// covariance() (Sigma_x) of the current state (Gibbs-SS over linear_regression_model with hierarchical_normal_covariates).
/// What with_covariate_law (inference/synthetic_regression.hpp) wraps to record (theta, sigma^2, mu_x, Sigma_x) together.
template <class C, class G = std::mt19937_64>
concept covariate_law_chain = sampler<C, G> && requires(const C& c) {
  { c.model().covariates().mean() } -> std::convertible_to<Eigen::VectorXd>;
  { c.model().covariates().covariance() } -> std::convertible_to<Eigen::MatrixXd>;
};

/// A target of gradient-based samplers (NUTS, samplers/nuts.hpp): dimension() of its unconstrained space (>= 1), and
/// log_density_gradient(u, grad), the log density at u up to a constant, Jacobians of any constraining transforms
/// included, with its gradient written to grad (sized dimension() by the caller). -infinity is allowed (outside the
/// support, a failed factorisation), NaN never. Called through a non-const reference so that a model may keep
/// workspaces: samplers own one copy per chain. Optional, detected: parameter_vector(u) (const), the constrained
/// quantities to record for the point u (default: u itself).
template <class M>
concept differentiable_model = requires(M& m, const M& cm, const Eigen::VectorXd& u, Eigen::VectorXd& grad) {
  { cm.dimension() } -> std::convertible_to<Eigen::Index>;
  { m.log_density_gradient(u, grad) } -> std::convertible_to<double>;
};

/// A differentiable_model that chooses the random initial points of gradient samplers itself (nuts_sampler uses it when
/// present instead of uniform draws on [-radius, radius]^dimension): initial_point(g, radius, u) writes a point into u
/// (already of size dimension()), drawing from g. For models whose parametrisation makes the uniform start a poor one.
template <class M, class G>
concept initial_point_model = differentiable_model<M> && requires(const M& cm, G& g, double radius, Eigen::VectorXd& u) {
  cm.initial_point(g, radius, u);
};

/// A marginal-inference back end of a pairwise MRF (families/graphical: tree_bp, brute_force_inference; docs/design-cgm.md
/// Sec. 5.2): marginals(theta, mu) writes the node and edge marginals for the log-potentials theta (table_layout order)
/// into mu and returns a report with `converged`; log_partition() is log Z of that call (exact, or an approximation such
/// as Bethe's); is_exact says which.
template <class B>
concept marginal_inference = requires(B& inf, const B& cinf, const Eigen::VectorXd& theta, Eigen::VectorXd& mu) {
  { inf.marginals(theta, mu).converged } -> std::convertible_to<bool>;
  { cinf.log_partition() } -> std::convertible_to<double>;
  { B::is_exact } -> std::convertible_to<bool>;
  { cinf.layout().size() } -> std::convertible_to<Eigen::Index>;
  { cinf.layout().edges_begin() } -> std::convertible_to<Eigen::Index>;
};

/// The evidence term log p(y | n) of a release of contingency tables, for CGM's E-step (samplers/cgm/cgm_noise.hpp;
/// docs/design-cgm.md Sec. 3.3, 3.5): its value, a supergradient in n, and the pieces of the dual problem
/// min_g N A(theta + g) - <g, y> + dual_quadratic() |g|^2 / 2 over |g_j| <= dual_box(), with the duality gap at the
/// residual r = y - n and dual point g.
template <class M>
concept cgm_noise = requires(const M& m, const Eigen::VectorXd& y, const Eigen::VectorXd& n, Eigen::VectorXd& g) {
  { m.log_likelihood(y, n) } -> std::convertible_to<double>;
  m.supergradient(y, n, g);
  { m.dual_box() } -> std::convertible_to<double>;
  { m.dual_quadratic() } -> std::convertible_to<double>;
  { m.duality_gap(y - n, g) } -> std::convertible_to<double>;
};

/// What one iterate() call of the library's iterative estimators reports.
struct iteration_status {
  /// The estimator's own convergence rule held at this step.
  bool converged = false;
  double change = 0.0;        ///< the estimator's own change measure (documented by each)
  int inner_iterations = 0;   ///< inner solver iterations or inference calls of this step
};

/// An iterative point estimator run by fit() (inference/fit.hpp; CGM-EM, naive MLE): iterate() does one step and
/// returns a status with `converged` and a `change` measure, converged() says whether it has, parameter_vector() is the current estimate and
/// events() its numerical events.
template <class E>
concept iterative_estimator = requires(E& e, const E& ce) {
  { e.iterate().converged } -> std::convertible_to<bool>;
  { e.iterate().change } -> std::convertible_to<double>;
  { ce.converged() } -> std::convertible_to<bool>;
  { ce.parameter_vector() } -> std::convertible_to<Eigen::VectorXd>;
  { ce.events() } -> std::convertible_to<numerical_events>;
};

/// A sampler that wants to be told when warm-up ends.
template <class S>
concept warmup_aware = requires(S& s) { s.end_warmup(); };

/// A sampler whose warm-up needs its length in advance (NUTS: Stan's metric windows are laid out over it). The driver
/// calls begin_warmup(burnin) once, before the first step, so the warm-up is given in one place: the driver's burn-in.
template <class S>
concept warmup_planned = requires(S& s, int transitions) { s.begin_warmup(transitions); };

/// A sampler that reports per-draw diagnostics, like Stan's sampler columns (lp__, accept_stat__, stepsize__, ...):
/// the static draw_diagnostic_names() and draw_diagnostics(), the values of the last step, one per name. Optional,
/// detected by the driver, which keeps them beside every kept draw (inference_result::diagnostics). NUTS reports
/// Stan's seven; the Gibbs-SS samplers report none (their state's log density is not evaluated).
template <class S>
concept reports_draw_diagnostics = requires(const S& s) {
  { S::draw_diagnostic_names() } -> std::convertible_to<std::vector<std::string>>;
  { s.draw_diagnostics() } -> std::convertible_to<Eigen::VectorXd>;
};

/// A simulation-based-calibration study (diagnostics/calibration_study.hpp): trial(g) simulates one truth and release and
/// returns each method's draws as a range of records with a method name, the true parameter vector and a draws matrix.
template <class S>
concept calibration_study =
    requires(const S& s, std::mt19937_64& g) {
      { s.trial(g) } -> std::ranges::range;
    } && requires(const std::ranges::range_value_t<decltype(std::declval<const S&>().trial(std::declval<std::mt19937_64&>()))>& r) {
      { r.method } -> std::convertible_to<std::string>;
      { r.truth } -> std::convertible_to<Eigen::VectorXd>;
      { r.draws } -> std::convertible_to<Eigen::MatrixXd>;
    };

// ---------------------------------------------------------------------------------------------------------------------
// Partition posteriors (sample and aggregate; docs/partition-release.md)
// ---------------------------------------------------------------------------------------------------------------------

/// What a partition posterior is asked to compute: the posterior given the partition's records only,
/// p_j(theta) proportional to [prod_{i in members} p(x_i | theta)]^likelihood_power p(theta)^prior_power.
struct partition_task {
  /// The partition's index j.
  std::size_t partition = 0;
  /// The record positions of partition j (the only records it may read; everything else must be public).
  std::span<const std::size_t> members;
  /// 1 for probabilities (Amitai 2018 Ch. 3), n / n_j for quantiles (the tempered posterior of Eq. 4.1).
  double likelihood_power = 1.0;
  /// 1, or 1 / M for a fractional prior (the full prior in each of M partitions would count it M times).
  double prior_power = 1.0;
};

/// A closed-form law of a scalar: non-member cdf(d, x) and quantile(d, p), found by argument-dependent lookup, so a
/// Boost.Math distribution qualifies as it is (a user's type declares them as hidden friends). Optional: support(d),
/// the pair of the support's ends, which Boost's distributions have; a cdf below or above it is then 0 or 1 without
/// asking the distribution (Boost's throw there).
template <class D>
concept closed_form_marginal = requires(const D& d, double x) {
  { cdf(d, x) } -> std::convertible_to<double>;
  { quantile(d, x) } -> std::convertible_to<double>;
};

/// A partition posterior: f(task, g) returns draws of the scalar of interest (Eigen::VectorXd or std::vector<double>)
/// or a closed_form_marginal. g is the partition's engine, chain_engine(seed, j) (inference/partition_posterior.hpp).
template <class F>
concept partition_posterior = std::invocable<F&, const partition_task&, std::mt19937_64&> &&
    (closed_form_marginal<std::remove_cvref_t<std::invoke_result_t<F&, const partition_task&, std::mt19937_64&>>> ||
     std::convertible_to<std::invoke_result_t<F&, const partition_task&, std::mt19937_64&>, Eigen::VectorXd> ||
     std::convertible_to<std::invoke_result_t<F&, const partition_task&, std::mt19937_64&>, std::vector<double>>);

/// A conjugate prior that can be raised to a power: prior_power(p, q), found by argument-dependent lookup, is the prior
/// p(theta)^q renormalised, for q in (0, 1], as a value of the same type (Beta(a, b)^q = Beta(1 + q (a - 1),
/// 1 + q (b - 1))). The fractional prior of a probability release (q = 1 / M) needs it; the built-in priors declare it
/// as a hidden friend, and a user declares it beside their prior.
template <class P>
concept powered_prior = conjugate_prior<P> && requires(const P& p, double q) {
  { prior_power(p, q) } -> std::same_as<P>;
};

/// Optional, for closed-form partition posteriors: parameter_marginal(p, k), found by argument-dependent lookup, is the
/// closed_form_marginal of coordinate k of the parameter under the prior (or posterior) p (families/marginals.hpp has
/// the built-in priors'; a Boost distribution is a valid answer). Without it, conjugate_partition_posterior draws.
template <class P>
concept prior_with_marginals = conjugate_prior<P> && requires(const P& p, int k) {
  { parameter_marginal(p, k) } -> closed_form_marginal;
};

}  // namespace privpost
// clang-format on
