// privpost/samplers/glm/glm_moment_model.hpp
// glm_moment_model: the noise-aware DP-GLM posterior (Kulkarni et al. 2021, Sec. 3-4.1; docs/design-glm.md Sec. 3.1-3.6):
// z ~ N(N mu(theta, Sigma), N V(theta, Sigma) + sigma^2 I) with the paper's priors on an unconstrained vector, log
// density and hand-derived gradient, a differentiable_model for nuts_sampler. The GLM enters through a moment map
// (logistic_moment_map in logistic_moment_model.hpp, poisson_moment_map in poisson_moment_model.hpp):
//
//     Map(int d, std::optional<double> intercept);              // the statistic's layout
//     Eigen::Index size() const; int augmented() const;         // D released entries; P = d (+ 1)
//     bool forward(nu, theta, Sigma, mu, V);                    // false: outside the map's domain (-infinity)
//     void adjoint(nu, theta, Sigma, a, g, nu_bar, theta_bar, Sigma_bar);  // at the last forward point; sets the
//                                                               // gradient of <a, mu> + <g, V>
//     void moments(nu, theta, Sigma, mu, V) const;              // for simulation (throws outside the domain)
//     void released_covariate_moments(z, n, mean, second) const; // E[x~], E[x~ x~'] from released sums, NaN where
//                                                               // not released (for initial points)
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <concepts>
#include <limits>
#include <numbers>
#include <optional>
#include <string>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/linalg/symmetric_eigen.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/core/transforms/cholesky_corr.hpp"
#include "privpost/samplers/glm/glm_prior.hpp"

namespace privpost {

/// The noise-aware DP-GLM posterior given the released z (in the map's glm_statistic layout), the public record count n
/// and the Gaussian noise sd sigma of every entry. sigma = 0 is the naive method (noise ignored) or, on the exact sums,
/// the CLT model without noise.
/// options: an intercept column of public constant c (coefficients theta~ = (theta_0, theta), linear predictor
/// theta_0 c + theta' x) and a covariate mean mu_x (x ~ N(mu_x, Sigma)); both off is the paper's model (docs/design-glm.md
/// Sec. 3.7; E14).
///
/// Unconstrained vector u = (c (P), v (d), y (d(d-1)/2), m (d, with a covariate mean)), P = d (+ 1 with an
/// intercept): theta~ = sqrt(s_max) tanh(||c||) c / ||c|| (glm_coefficient_transform; the paper's prior on other
/// coordinates than its (p, r)), tau = exp(v), L = cholesky_corr(y), mu_x = m.
/// log_density_gradient returns the log posterior up to a constant with every Jacobian, -infinity (counted in
/// failures()) where N V + diag(w) (w = sigma^2 unless set_noise_variances) is not positive definite or the map fails; it never
/// jitters or clips (that would break the sampler's reversibility; docs/design-glm.md Sec. 3.6). parameter_vector(u) is (theta~,
/// tau, Omega_ij for i > j in row order, mu_x). Evaluation allocates nothing beyond what the map allocates (the logistic map:
/// nothing; workspaces sized at construction): one copy per chain. What glm_moment_model needs of a moment map (the interface in
/// this file's header comment).
template <class M>
concept glm_moment_map = std::constructible_from<M, int, std::optional<double>> &&
    requires(M& map, const M& cmap, const Eigen::VectorXd& x, const Eigen::MatrixXd& s, Eigen::VectorXd& out_v,
             Eigen::MatrixXd& out_m) {
  { cmap.size() } -> std::convertible_to<Eigen::Index>;
  { cmap.augmented() } -> std::convertible_to<int>;
  { map.forward(x, x, s, out_v, out_m) } -> std::same_as<bool>;
  map.adjoint(x, x, s, x, s, out_v, out_v, out_m);
  cmap.moments(x, x, s, out_v, out_m);
  cmap.released_covariate_moments(x, 1.0, out_v, out_m);
};

/// The moment-matched GLM model of a noisy GLM release (see the file comment): the log density of the parameters given the
/// release z of n records with noise sd sigma, for NUTS.
template <glm_moment_map Map>
class glm_moment_model {
 public:
  /// The moment map.
  using map_type = Map;

  /// The model of the release z of n records with noise sd sigma and d covariates; std::invalid_argument on a bad size, n, sigma
  /// or d.
  glm_moment_model(const Eigen::VectorXd& z, double n, double sigma, int d, const glm_prior& prior = {},
                   const glm_model_options& options = {})
      : map_(d, options.intercept),
        z_(z),
        n_(n),
        sigma_(sigma),
        prior_(prior),
        options_(options),
        coef_(prior.s_max),
        d_(d),
        p_(map_.augmented()),
        o_(p_ - d) {
    constexpr const char* f = "glm_moment_model";
    check_size_match(f, "released z", z.size(), "statistic size P + P(P+1)/2 (- 1 with an intercept), P = d (+ 1)", map_.size());
    for (Eigen::Index i = 0; i < z.size(); ++i) check_finite(f, "released z", z(i));
    check_record_count(f, n);
    check_nonnegative_finite(f, "noise sd sigma", sigma);
    check_positive_finite(f, "s_max", prior.s_max);
    check_positive_finite(f, "tau_scale", prior.tau_scale);
    check_positive_finite(f, "lkj_eta", prior.lkj_eta);
    if (options.covariate_mean) check_positive_finite(f, "mean_scale", prior.mean_scale);
    if (options.intercept) check_positive_finite(f, "intercept constant", *options.intercept);
    const Eigen::Index dd = map_.size();
    mu_.setZero(dd);
    v_.setZero(dd, dd);
    c_.setZero(dd, dd);
    c_inv_.setZero(dd, dd);
    l_inv_.setZero(dd, dd);
    g_.setZero(dd, dd);
    alpha_.setZero(dd);
    l_inv_diag_.setZero(dd);
    w_.setConstant(dd, sigma * sigma);
    a_.setZero(dd);
    llt_.compute(Eigen::MatrixXd::Identity(dd, dd));  // sizes the factor and sets its status (copies read it)
    for (Eigen::VectorXd* x : {&theta_, &theta_bar_, &nu_, &nu_bar_}) x->setZero(p_);
    for (Eigen::VectorXd* x : {&tau_, &tau_bar_}) x->setZero(d);
    for (Eigen::MatrixXd* m : {&sigma_m_, &sigma_bar_}) m->setZero(p_, p_);
    for (Eigen::MatrixXd* m : {&l_, &omega_, &omega_bar_, &l_bar_}) m->setZero(d, d);
    if (options.intercept) nu_(0) = *options.intercept;
    y_bar_.setZero(cholesky_corr_free_size(d));
    y_.setZero(cholesky_corr_free_size(d));
  }

  /// P + d + d(d-1)/2 (+ d with a covariate mean): the number of parameters.
  Eigen::Index dimension() const noexcept { return p_ + d_ + cholesky_corr_free_size(d_) + (options_.covariate_mean ? d_ : 0); }
  /// d.
  int covariates() const noexcept { return d_; }
  /// P: the coefficients, d plus 1 with an intercept.
  int coefficients() const noexcept { return p_; }
  /// The model options.
  const glm_model_options& options() const noexcept { return options_; }
  /// Evaluations where N V + sigma^2 I was not positive definite or a moment was not finite (-infinity returned).
  std::uint64_t failures() const noexcept { return failures_; }

  /// The random initial point of nuts_sampler (initial_point_model).
  /// - Coefficients near 0: glm_coefficient_transform::initial_point (||theta~|| <= sqrt(s_max) tanh(radius / 2)).
  /// - Covariate parameters uniform on [-radius, radius] as in Stan (log tau around log tau_scale), or, for maps that
  ///   ask for it (a static constexpr bool moment_start = true: the Poisson and logistic maps), at the moments the release itself
  ///   estimates (the map's released_covariate_moments): Sigma from E[x x'] less mean mean', mu_x from E[x]; tau at
  ///   most 3 tau_scale, |mu_x| at most 3 mean_scale; each jittered uniformly by +-radius / 10. Where an estimate is
  ///   missing or invalid (noise can make a variance negative or a correlation matrix indefinite) that coordinate
  ///   starts uniform as without the moment start.
  /// Why: the normal approximation of the sums has a spurious mode where theta' Sigma theta is large (the Poisson V
  /// grows as e^{2 theta' Sigma theta} and "explains" any residual). Measured by a scratch study on 12 Poisson releases
  /// of N = 2000 records (d = 2, intercept, covariate mean, no noise, s_max = 9), 4 chains each: Stan's uniform start
  /// left 19 of 48 chains in that mode, the small-coefficient start alone 9, both with the moment start 0;
  /// tests/samplers/glm_baseline_calibration_test.cpp checks the agreement with the records' posterior it makes
  /// possible. The logistic maps: from the uniform start (log density about -10^6 at d = 6, N = 5000) NUTS spent a third
  /// to a half of a 4 x (1000 + 1000) run reaching the bulk; the moment start with nuts_options::curvature_start cut
  /// that run's CPU time by a quarter (docs/model-glm.md).
  template <random_engine G>
  void initial_point(G& g, double radius, Eigen::VectorXd& u) const {
    const int d = d_, p = p_;
    const Eigen::Index nc = cholesky_corr_free_size(d);
    auto jitter = [&](double width) { return width * (2.0 * draw_uniform(g) - 1.0); };
    u.resize(dimension());
    glm_coefficient_transform::initial_point(g, radius, u.head(p));
    if constexpr (!moment_start) {
      for (Eigen::Index i = p; i < u.size(); ++i) u(i) = jitter(radius);
      return;
    }
    // The release's covariate moments (P-sized, augmented), reduced to the d covariates.
    Eigen::VectorXd mean_a;
    Eigen::MatrixXd second_a;
    map_.released_covariate_moments(z_, n_, mean_a, second_a);
    Eigen::VectorXd mean = Eigen::VectorXd::Zero(d);
    bool mean_known = true;
    for (int k = 0; k < d; ++k) {
      if (std::isfinite(mean_a(o_ + k))) {
        mean(k) = mean_a(o_ + k);
      } else if (o_ == 1 && std::isfinite(second_a(0, 1 + k))) {
        mean(k) = second_a(0, 1 + k) / options_.intercept.value_or(1.0);  // E[c x_k] / c
      } else {
        mean_known = false;
      }
    }
    if (!options_.covariate_mean) mean.setZero();  // the model's x has mean 0: E[x x'] is Sigma
    Eigen::MatrixXd sigma = second_a.bottomRightCorner(d, d) - mean * mean.transpose();
    const double log_tau_scale = std::log(prior_.tau_scale);
    for (int k = 0; k < d; ++k) {
      const double var = sigma(k, k);
      const bool ok = std::isfinite(var) && var > 0.0;
      // At most 3 tau_scale (a noisy release can estimate any variance; the prior puts little mass beyond that).
      u(p + k) = ok ? std::min(0.5 * std::log(var), log_tau_scale + std::log(3.0)) + jitter(radius / 10.0)
                    : log_tau_scale + jitter(radius);
    }
    Eigen::VectorXd y = Eigen::VectorXd::Zero(nc);
    bool corr_ok = sigma.allFinite() && (sigma.diagonal().array() > 0.0).all();
    if (corr_ok && d > 1) {
      const Eigen::VectorXd sd = sigma.diagonal().array().sqrt();
      const Eigen::MatrixXd corr = sd.asDiagonal().inverse() * sigma * sd.asDiagonal().inverse();
      const Eigen::LLT<Eigen::MatrixXd> llt(corr);
      corr_ok = llt.info() == Eigen::Success;
      if (corr_ok) cholesky_corr_unconstrain(llt.matrixL(), y);
      corr_ok = corr_ok && y.allFinite();
    }
    for (Eigen::Index i = 0; i < nc; ++i) u(p + d + i) = corr_ok ? y(i) + jitter(radius / 10.0) : jitter(radius);
    if (options_.covariate_mean)
      for (int k = 0; k < d; ++k)
        u(p + d + nc + k) = mean_known
                                ? std::clamp(mean(k), -3.0 * prior_.mean_scale, 3.0 * prior_.mean_scale) + jitter(radius / 10.0)
                                : prior_.mean_scale * jitter(radius);
  }

  /// Whether initial_point starts the covariate parameters at the release's moment estimates (Map::moment_start).
  static constexpr bool moment_start = [] {
    if constexpr (requires { Map::moment_start; }) return static_cast<bool>(Map::moment_start);
    return false;
  }();

  /// Log posterior density (up to a constant) and its gradient at u.
  double log_density_gradient(const Eigen::VectorXd& u, Eigen::VectorXd& grad) {
    const int d = d_, p = p_;
    const Eigen::Index nc = cholesky_corr_free_size(d);
    if (u.size() != dimension()) throw_invalid("glm_moment_model", "size of u", u.size(), "dimension()");
    const auto v = u.segment(p, d);
    double lp = 0.0;
    if (!u.allFinite() || !coef_.forward(u.head(p), theta_, lp)) return fail(grad);
    const double log_j_corr = constrain_covariates(u);
    if (options_.covariate_mean) lp -= 0.5 * u.tail(d).squaredNorm() / (prior_.mean_scale * prior_.mean_scale);

    // Prior and Jacobians (docs/design-glm.md Sec. 3.4); the coefficients' part is in lp already.
    const double ts2 = prior_.tau_scale * prior_.tau_scale;
    lp += (-0.5 * tau_.array().square() / ts2).sum() + v.sum();
    for (int i = 1; i < d; ++i) lp += lkj_coefficient(i) * std::log(l_(i, i));
    lp += log_j_corr;

    // Likelihood: log N(z; n mu, n V + diag(w)), w = sigma^2 unless set_noise_variances.
    if (!map_.forward(nu_, theta_, sigma_m_, mu_, v_)) return fail(grad);
    // A NaN or infinity in V reaches a diagonal entry of the Cholesky factor (every L_ii reads its row's entries),
    // which the loop below refuses: no separate scan of the D x D matrix (4 % of the benchmark's gradient).
    if (!mu_.allFinite()) return fail(grad);
    const Eigen::Index dd = map_.size();
    c_ = n_ * v_;
    c_.diagonal() += w_;
    llt_.compute(c_);
    if (llt_.info() != Eigen::Success) return fail(grad);
    double log_det_half = 0.0;
    for (Eigen::Index i = 0; i < dd; ++i) {
      const double lii = llt_.matrixLLT()(i, i);
      if (!(lii > 0.0) || !std::isfinite(lii)) return fail(grad);
      log_det_half += std::log(lii);
    }
    a_ = z_ - n_ * mu_;  // the residual r (a_ is reused for the mean adjoint below)
    alpha_ = a_;
    llt_.solveInPlace(alpha_);  // alpha = C^-1 r
    const double loglik = -0.5 * a_.dot(alpha_) - log_det_half - 0.5 * static_cast<double>(dd) * std::log(2.0 * std::numbers::pi);
    lp += loglik;

    // Adjoints of the likelihood in mu and V (docs/design-glm.md Sec. 3.5, step 1).
    invert_from_cholesky();
    g_.noalias() = alpha_ * alpha_.transpose();
    g_ -= c_inv_;
    g_ *= 0.5 * n_;
    a_ = n_ * alpha_;
    map_.adjoint(nu_, theta_, sigma_m_, a_, g_, nu_bar_, theta_bar_, sigma_bar_);

    // Chain rule back to u (step 3).
    const auto sb = sigma_bar_.bottomRightCorner(d, d);  // the covariates' block (the intercept's is constant)
    for (int i = 0; i < d; ++i) {
      double t = 0.0;
      for (int j = 0; j < d; ++j) t += (sb(i, j) + sb(j, i)) * omega_(i, j) * tau_(j);
      tau_bar_(i) = t;
    }
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) omega_bar_(i, j) = tau_(i) * tau_(j) * sb(i, j);
    l_bar_.noalias() = omega_bar_ * l_;  // (Omega_bar + Omega_bar') L in two products: a sum operand would be a temporary
    l_bar_.noalias() += omega_bar_.transpose() * l_;
    for (int i = 1; i < d; ++i) l_bar_(i, i) += lkj_coefficient(i) / l_(i, i);

    grad.resize(dimension());
    coef_.backward(u.head(p), theta_bar_, grad.head(p));
    for (int j = 0; j < d; ++j) grad(p + j) = tau_bar_(j) * tau_(j) - tau_(j) * tau_(j) / ts2 + 1.0;
    if (d > 1) {
      y_bar_.setZero();
      cholesky_corr_adjoint(y_, l_, l_bar_, y_bar_);
      grad.segment(p + d, nc) = y_bar_;
    }
    if (options_.covariate_mean) grad.tail(d) = nu_bar_.tail(d) - u.tail(d) / (prior_.mean_scale * prior_.mean_scale);
    if (!std::isfinite(lp) || !grad.allFinite()) return fail(grad);
    return lp;
  }

  /// (theta~, tau, Omega_ij for i > j in row order, mu_x with a covariate mean) at u: dimension() entries.
  Eigen::VectorXd parameter_vector(const Eigen::VectorXd& u) const {
    const int d = d_, p = p_;
    const Eigen::Index nc = cholesky_corr_free_size(d);
    if (u.size() != dimension()) throw_invalid("glm_moment_model", "size of u", u.size(), "dimension()");
    Eigen::VectorXd out(dimension());
    out.head(p) = glm_coefficient_transform::coefficients(u.head(p), prior_.s_max);
    out.segment(p, d) = u.segment(p, d).array().exp().matrix();
    if (d > 1) {
      Eigen::MatrixXd l(d, d);
      cholesky_corr_constrain(u.segment(p + d, nc), l);
      const Eigen::MatrixXd omega = l * l.transpose();
      Eigen::Index c = p + d;
      for (int i = 1; i < d; ++i)
        for (int j = 0; j < i; ++j) out(c++) = omega(i, j);
    }
    if (options_.covariate_mean) out.tail(d) = u.tail(d);
    return out;
  }

  /// The public number of records n.
  double records() const noexcept { return n_; }
  /// The constructor's noise sd sigma (the likelihood uses noise_variances(), which set_noise_variances may change).
  double noise_sd() const noexcept { return sigma_; }
  /// The noise variance of every released entry in the likelihood N(z; N mu, N V + diag(w)): sigma^2 from the
  /// constructor until set_noise_variances.
  const Eigen::VectorXd& noise_variances() const noexcept { return w_; }

  /// Conditions the likelihood on per-entry noise variances w (the latent variances of a scale-mixture mechanism such
  /// as Laplace: glm_collapsed_gibbs). Throws std::invalid_argument unless w has size() entries, each finite and >= 0.
  /// Allocates nothing.
  void set_noise_variances(const Eigen::VectorXd& w) {
    constexpr const char* f = "glm_moment_model::set_noise_variances";
    check_size_match(f, "noise variances w", w.size(), "statistic size", map_.size());
    for (Eigen::Index j = 0; j < w.size(); ++j) check_nonnegative_finite(f, "noise variance w_j", w(j));
    w_ = w;
  }

  /// The per-record mean and covariance of the statistic, mu(theta~, Sigma, mu_x) and V, at the unconstrained point u
  /// (what log_density_gradient uses; the mean and covariance of the exact sums are N mu and N V). False where the
  /// map fails or u is not finite (mean and cov then unspecified). Allocates nothing once mean and cov have their sizes.
  bool statistic_moments(const Eigen::VectorXd& u, Eigen::VectorXd& mean, Eigen::MatrixXd& cov) {
    if (u.size() != dimension()) throw_invalid("glm_moment_model::statistic_moments", "size of u", u.size(), "dimension()");
    double lp = 0.0;
    if (!u.allFinite() || !coef_.forward(u.head(p_), theta_, lp)) return false;
    constrain_covariates(u);
    if (!map_.forward(nu_, theta_, sigma_m_, mu_, v_) || !mu_.allFinite() || !v_.allFinite()) return false;
    mean = mu_;
    cov = v_;
    return true;
  }

  /// Per-record mean and covariance of the statistic at the parameters (theta with P entries; an empty mean is zero),
  /// for simulating releases.
  void moments(const glm_parameters& at, Eigen::VectorXd& mu, Eigen::MatrixXd& v) const {
    constexpr const char* f = "glm_moment_model::moments";
    const int d = d_, p = p_;
    check_size_match(f, "theta", at.theta.size(), "coefficients P", p);
    check_size_match(f, "Sigma rows", at.sigma.rows(), "d", d);
    check_size_match(f, "Sigma columns", at.sigma.cols(), "d", d);
    if (at.mean.size() != 0) check_size_match(f, "covariate mean", at.mean.size(), "d", d);
    Eigen::VectorXd nu = Eigen::VectorXd::Zero(p);
    if (options_.intercept) nu(0) = *options_.intercept;
    if (at.mean.size() != 0) nu.tail(d) = at.mean;
    Eigen::MatrixXd sigma = Eigen::MatrixXd::Zero(p, p);
    sigma.bottomRightCorner(d, d) = at.sigma;
    map_.moments(nu, at.theta, sigma, mu, v);
  }

  /// The moment map.
  const Map& moment_map() const noexcept { return map_; }

 private:
  // tau_, L, Omega, the covariates' block of Sigma~ and mu_x from u (after the coefficients); returns the correlation
  // transform's log Jacobian.
  double constrain_covariates(const Eigen::VectorXd& u) {
    const int d = d_, p = p_, o = o_;
    y_ = u.segment(p + d, cholesky_corr_free_size(d));
    tau_ = u.segment(p, d).array().exp().matrix();
    const double log_j_corr = d > 1 ? cholesky_corr_constrain(y_, l_) : 0.0;
    if (d == 1) l_(0, 0) = 1.0;
    omega_.noalias() = l_ * l_.transpose();
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) sigma_m_(o + i, o + j) = tau_(i) * tau_(j) * omega_(i, j);
    if (options_.covariate_mean) nu_.tail(d) = u.tail(d);
    return log_j_corr;
  }

  // LKJ-Cholesky density exponent of L_ii (0-based row i >= 1): d - i - 3 + 2 eta.
  double lkj_coefficient(int i) const noexcept { return static_cast<double>(d_ - i - 3) + 2.0 * prior_.lkj_eta; }

  // c_inv_ = C^-1 = L^-T L^-1 from the factor L of llt_, by plain loops over the lower triangles: at these sizes
  // (D = 27 at d = 6) about four times faster than Eigen's blocked solve against the identity, which dominated the
  // gradient's cost (benchmarks/glm_bench.cpp).
  void invert_from_cholesky() {
    const auto& l = llt_.matrixLLT();
    const Eigen::Index dd = l.rows();
    // Column j of L^-1 solves L x = e_j; column-oriented forward substitution keeps the inner loops contiguous (and
    // vectorised by Eigen's segment expressions), with the diagonal's reciprocals taken once.
    for (Eigen::Index k = 0; k < dd; ++k) l_inv_diag_(k) = 1.0 / l(k, k);
    for (Eigen::Index j = 0; j < dd; ++j) {
      auto x = l_inv_.col(j);
      x.tail(dd - j).setZero();
      x(j) = 1.0;
      for (Eigen::Index k = j; k < dd; ++k) {
        const double xk = x(k) * l_inv_diag_(k);
        x(k) = xk;
        x.tail(dd - k - 1) -= xk * l.col(k).tail(dd - k - 1);
      }
    }
    for (Eigen::Index j = 0; j < dd; ++j)
      for (Eigen::Index i = j; i < dd; ++i) {
        const double t = l_inv_.col(i).tail(dd - i).dot(l_inv_.col(j).tail(dd - i));
        c_inv_(i, j) = t;
        c_inv_(j, i) = t;
      }
  }

  double fail(Eigen::VectorXd& grad) {
    ++failures_;
    grad.setZero(dimension());
    return -std::numeric_limits<double>::infinity();
  }

  Map map_;
  Eigen::VectorXd z_;
  double n_;
  double sigma_;
  Eigen::VectorXd w_;  // noise variances of the likelihood
  glm_prior prior_;
  glm_model_options options_;
  glm_coefficient_transform coef_;
  int d_, p_, o_;
  std::uint64_t failures_ = 0;
  // Workspaces.
  Eigen::VectorXd mu_, alpha_, a_, l_inv_diag_;
  Eigen::MatrixXd v_, c_, c_inv_, l_inv_, g_;
  Eigen::LLT<Eigen::MatrixXd> llt_;
  Eigen::VectorXd theta_, theta_bar_, tau_, tau_bar_, nu_, nu_bar_, y_, y_bar_;
  Eigen::MatrixXd l_, omega_, sigma_m_, sigma_bar_, omega_bar_, l_bar_;
};

/// A release simulated from the model's own approximation at the true parameters: s ~ N(N mu, N V), then
/// z = s + N(0, sigma^2 I) with the model's N and sigma (the design of the simulation-based calibration, docs/design-glm.md
/// Sec. 5.7 F.1). For tests and studies; a real release sums records (glm_statistic).
template <glm_moment_map Map, random_engine G>
Eigen::VectorXd simulate_glm_release(const glm_moment_model<Map>& model, const glm_parameters& truth, G& g) {
  Eigen::VectorXd mu;
  Eigen::MatrixXd v;
  model.moments(truth, mu, v);
  const double n = model.records();
  const Eigen::MatrixXd nv = n * v;
  for (Eigen::Index j = 0; j < nv.cols(); ++j)
    for (Eigen::Index i = 0; i < nv.rows(); ++i)
      if (!std::isfinite(nv(i, j)))
        throw_domain("simulate_glm_release", "entry (" + std::to_string(i) + ", " + std::to_string(j) + ") of N V", nv(i, j),
                     "finite");
  Eigen::MatrixXd root;
  const Eigen::LLT<Eigen::MatrixXd> llt(nv);
  if (llt.info() == Eigen::Success) {
    root = llt.matrixL();
  } else {
    // N V is only semidefinite at some parameters (a direction of the statistics with variance at rounding level, as
    // where a Poisson rate is near 0): the draw goes through its symmetric square root, rounding-level negative
    // eigenvalues at 0. A clearly negative eigenvalue is a broken moment map and stays an error.
    Eigen::VectorXd values;
    Eigen::MatrixXd vectors;
    symmetric_eigen(nv, values, &vectors);
    const double scale = std::max(values.cwiseAbs().maxCoeff(), std::numeric_limits<double>::min());
    if (values.minCoeff() < -1e-8 * scale)
      throw_domain("simulate_glm_release", "smallest eigenvalue of N V", values.minCoeff(),
                   "a positive semidefinite covariance (at least -1e-8 times its largest)");
    root = vectors * values.cwiseMax(0.0).cwiseSqrt().asDiagonal();
  }
  Eigen::VectorXd e(mu.size()), f(mu.size());
  for (Eigen::Index i = 0; i < mu.size(); ++i) {
    e(i) = draw_normal(g);
    f(i) = draw_normal(g);
  }
  return n * mu + root * e + model.noise_sd() * f;
}

}  // namespace privpost
