// privpost/samplers/record_regression.hpp
// record_regression: the record-level data-augmentation sampler (Ju et al. 2022; docs/record-level.md) for
// Bayesian linear regression released by sufficient-statistic perturbation with clamped records. The n records
// (x_i, y_i) are latent:
//     theta, sigma^2 ~ NIG;   x_i ~ N(mu_x, Sigma_x);   y_i | x_i ~ N(theta^T x~_i, sigma^2);
//     z ~ p(z | S),   S = sum_i c(x_i, y_i),   c = the layout's entries of u u^T, u = (clamp(x~_i), clamp(y_i)),
// where the clamp is into the declared box the data owner used (each covariate into its interval, y into its interval),
// exactly what `privpost-release --model linreg` sums. The covariate law is either hierarchical, (mu_x, Sigma_x) ~ NIW
// updated from the latent covariates each sweep (the record-level Gibbs-SS-Update), or a fixed normal law.
//
// A sweep: (theta, sigma^2) | records by the NIG update on the Gram matrix of the *unclamped* records; (mu_x, Sigma_x) |
// covariates (hierarchical law); then every record in turn by Metropolis-Hastings with the model as proposal,
//     (x*, y*) ~ f(. | theta, sigma^2, mu_x, Sigma_x),   alpha = min(1, p(z | S - c(x_i, y_i) + c(x*, y*)) / p(z | S)).
// The f terms cancel, so only the mechanism's density enters (any release_mechanism: Laplace, Gaussian, ...). The
// target's (theta, sigma^2) marginal is the exact posterior given the release: no central limit theorem, no moment
// approximation, and clamping modelled exactly, which Gibbs-SS (an unclamped CLT model) does not. A sweep costs
// O(n D) with D = layout.size(); the running sums are recomputed from the records at the end of every sweep, so
// rounding never accumulates. For an eps-DP Laplace release every alpha is at least e^-eps (clamped contributions
// stay in the declared ranges the sensitivity came from).
//
// Regression needs a full covariate law here (like MCMC-Ind, 001 Sec. 3.3); Gibbs-SS-Noisy and -Prior need only its
// moments.
//
//     record_regression chain(layout, nig_prior, niw_hyperprior{...}, box_x, box_y, laplace_mechanism(l1, eps), z, n, g);
//     infer([&](auto& g) { return record_regression(layout, prior, covariate_law, bx, by, mechanism, z, n, g); }, o);
// A trailing record_init::consistent moves the records towards the release before the first sweep (samplers/record_frame.hpp).
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/interval.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/families/regression/covariate_models.hpp"
#include "privpost/families/regression/normal_inverse_gamma_regression.hpp"
#include "privpost/families/regression/regression_layout.hpp"
#include "privpost/mechanisms/reachable.hpp"
#include "privpost/samplers/record_releases.hpp"

namespace privpost {

/// A fixed normal covariate law x ~ N(mean, covariance) (no nuisance update; covariance symmetric positive definite).
struct normal_covariate_law {
  /// The covariates' mean.
  Eigen::VectorXd mean;
  /// The covariates' covariance.
  Eigen::MatrixXd covariance;
};

namespace detail {
// The checks of a regression record chain's setup: the prior's dimension against the design, finite declared bounds
// (one interval per covariate), and a finite release of the layout's size.
inline void check_regression_release(const char* f, const regression_layout& layout, const nig_regression_prior& prior,
                                     const std::vector<interval>& covariate_bounds, interval response_bounds,
                                     const Eigen::VectorXd& z) {
  check_size_match(f, "prior dimension", prior.dimension(), "design columns", layout.columns());
  check_size_match(f, "covariate bounds", static_cast<Eigen::Index>(covariate_bounds.size()), "covariates d",
                   layout.covariates());
  for (const auto& b : covariate_bounds) {
    check_finite(f, "covariate lower bound", b.lo);
    check_finite(f, "covariate upper bound", b.hi);
  }
  check_finite(f, "response lower bound", response_bounds.lo);
  check_finite(f, "response upper bound", response_bounds.hi);
  check_size_match(f, "release z", z.size(), "layout size", layout.size());
  check_finite(f, "z", z);
}

// The rule of mechanisms/reachable.hpp: n records clamped into the box give entry k of the sum in n times its range.
inline void check_regression_reachable(const char* f, const regression_layout& layout,
                                       const std::vector<interval>& covariate_bounds, interval response_bounds,
                                       const Eigen::VectorXd& z, double n, double scale) {
  const std::vector<interval> ranges = layout.statistic_ranges(covariate_bounds, response_bounds);
  for (Eigen::Index k = 0; k < z.size(); ++k)
    check_reachable(f, "z(" + std::to_string(k) + ")", z(k), n * ranges[static_cast<std::size_t>(k)].lo,
                    n * ranges[static_cast<std::size_t>(k)].hi, n, scale);
}

// c(x, y): the layout's entries of u u^T for u = (clamp(x~), clamp(y)), the record clamped into the declared box as
// the data owner summed it, into out (u: scratch of size columns + 1).
inline void clamped_regression_contribution(const regression_layout& layout, const std::vector<interval>& covariate_bounds,
                                            interval response_bounds, const Eigen::Ref<const Eigen::VectorXd>& x, double y,
                                            Eigen::VectorXd& u, Eigen::VectorXd& out) {
  const int off = layout.intercept() ? 1 : 0;
  if (layout.intercept()) u(0) = layout.intercept_value();
  for (int j = 0; j < layout.covariates(); ++j) {
    const auto& b = covariate_bounds[static_cast<std::size_t>(j)];
    u(off + j) = std::clamp(x(j), b.lo, b.hi);
  }
  u(layout.columns()) = std::clamp(y, response_bounds.lo, response_bounds.hi);
  for (int k = 0; k < layout.size(); ++k) out(k) = u(layout.pair(k).first) * u(layout.pair(k).second);
}

// Adds the unclamped record's row u = (x~, y) to the lower triangle of the Gram matrix (u: scratch of size columns + 1).
inline void add_regression_row(const regression_layout& layout, const Eigen::Ref<const Eigen::VectorXd>& x, double y,
                               Eigen::VectorXd& u, Eigen::MatrixXd& gram) {
  const int off = layout.intercept() ? 1 : 0;
  if (layout.intercept()) u(0) = layout.intercept_value();
  for (int j = 0; j < layout.covariates(); ++j) u(off + j) = x(j);
  u(layout.columns()) = y;
  gram.template selfadjointView<Eigen::Lower>().rankUpdate(u);
}

// One record from the model, the law the record proposals of record_regression and sharded_record_regression draw
// from: x = mean + L e (L L^T = the covariate covariance, llt_x its factorisation) into x, and the returned y ~
// N(theta~' x~, variance); e: scratch of d entries. The draws are taken in this order (e, then y).
template <random_engine G>
double draw_regression_record(const regression_layout& layout, const Eigen::LLT<Eigen::MatrixXd>& llt_x,
                              const Eigen::VectorXd& mean, const Eigen::VectorXd& theta, double variance, Eigen::VectorXd& e,
                              Eigen::VectorXd& x, G& g) {
  const int d = layout.covariates();
  for (int j = 0; j < d; ++j) e(j) = draw_normal(g);
  x.noalias() = llt_x.matrixL() * e;
  x += mean;
  const int off = layout.intercept() ? 1 : 0;
  double mean_y = layout.intercept() ? layout.intercept_value() * theta(0) : 0.0;
  for (int j = 0; j < d; ++j) mean_y += theta(off + j) * x(j);
  return mean_y + std::sqrt(variance) * draw_normal(g);
}
}  // namespace detail

/// The record-level regression sampler over (theta, sigma^2[, mu_x, Sigma_x], records). Models privpost::sampler;
/// parameter_vector() is (theta, sigma^2), as the regression studies and `privpost-infer` report.
template <release_mechanism Mechanism>
requires std::same_as<typename Mechanism::vector_type, Eigen::VectorXd>
class record_regression {
 public:
  /// @{
  /// The most records a chain holds (a sweep is O(n D)), and the most contributions n D it stores.
  static constexpr double max_records = record_frame_max_records;
  static constexpr double max_stored_contributions = 1e8;
  /// @}

  /// Hierarchical covariates: (mu_x, Sigma_x) ~ covariate_prior (NIW), updated each sweep. The layout needs its
  /// intercept column (as hierarchical_normal_covariates does).
  template <random_engine G>
  record_regression(const regression_layout& layout, const nig_regression_prior& prior, const niw_hyperprior& covariate_prior,
                    const std::vector<interval>& covariate_bounds, interval response_bounds, const Mechanism& mechanism,
                    const Eigen::VectorXd& z, double n, G& g, record_init init = record_init::prior)
      : record_regression(layout, prior, covariate_bounds, response_bounds, mechanism, z, n, init) {
    hierarchical_.emplace(layout_, covariate_prior, g);
    factor_covariate_law();
    start(g, init);
  }

  /// Fixed covariates: x ~ N(law.mean, law.covariance) in every sweep.
  template <random_engine G>
  record_regression(const regression_layout& layout, const nig_regression_prior& prior, const normal_covariate_law& law,
                    const std::vector<interval>& covariate_bounds, interval response_bounds, const Mechanism& mechanism,
                    const Eigen::VectorXd& z, double n, G& g, record_init init = record_init::prior)
      : record_regression(layout, prior, covariate_bounds, response_bounds, mechanism, z, n, init) {
    constexpr const char* f = "record_regression";
    check_size_match(f, "covariate law mean", law.mean.size(), "covariates d", layout_.covariates());
    check_finite(f, "covariate law mean", law.mean);
    check_symmetric_positive_definite(f, "covariate law covariance", law.covariance);
    mu_x_ = law.mean;
    sigma_x_ = law.covariance;
    factor_covariate_law();
    start(g, init);
  }

  /// One sweep: (theta, sigma^2) | records, (mu_x, Sigma_x) | covariates (hierarchical law), then every record in turn
  /// (systematic scan); the sums are recomputed from the records at the end.
  template <random_engine G>
  void step(G& g) {
    update_parameters(g);
    for (Eigen::Index i = 0; i < records_x_.cols(); ++i) update_record(i, g);
    resum();
  }

  /// log alpha of replacing record i by (x, y) (before the min with 0): log p(z | S - c_i + c(x, y)) - log p(z | S).
  /// The acceptance function of update_record (the kernel tests build the kernel from it).
  double log_acceptance(Eigen::Index i, const Eigen::VectorXd& x, double y) const {
    check_size_match("record_regression::log_acceptance", "x", x.size(), "covariates d", layout_.covariates());
    Eigen::VectorXd c(layout_.size()), u(layout_.columns() + 1);
    contribution(x, y, u, c);
    if (c == contributions_.col(i)) return 0.0;
    const Eigen::VectorXd proposed = release_sum_ - contributions_.col(i) + c;
    double log_new = 0.0;
    return change(proposed, log_new);
  }

  /// One Metropolis-Hastings update of record i at the current parameters: (x*, y*) from the model, accepted with
  /// probability min(1, exp(log_acceptance(i, x*, y*))) (no uniform is drawn when that is 1). Returns whether it was.
  template <random_engine G>
  bool update_record(Eigen::Index i, G& g) {
    const double y_new = draw_proposal(theta_, g);
    ++proposed_;
    double log_new = log_release_;
    const bool same = c_new_ == contributions_.col(i);
    if (!same) {
      proposed_sum_ = release_sum_;
      proposed_sum_ -= contributions_.col(i);
      proposed_sum_ += c_new_;
      const double log_alpha = change(proposed_sum_, log_new);
      smallest_log_alpha_ = std::min(smallest_log_alpha_, log_alpha);
      if (log_alpha < 0.0 && !log_uniform_below(draw_uniform(g), log_alpha)) return false;
      release_sum_.swap(proposed_sum_);
      log_release_ = log_new;
      contributions_.col(i) = c_new_;
    }
    ++accepted_;
    records_x_.col(i) = x_new_;
    records_y_(i) = y_new;
    return true;
  }

  /// (theta, sigma^2).
  Eigen::VectorXd parameter_vector() const {
    Eigen::VectorXd v(theta_.theta.size() + 1);
    v << theta_.theta, theta_.variance;
    return v;
  }
  /// The current (theta, sigma^2).
  const regression_parameter& parameter() const noexcept { return theta_; }
  /// Sets (theta, sigma^2) (the kernel tests hold it fixed and call update_record). std::invalid_argument for a wrong
  /// size or a variance that is not positive and finite.
  void set_parameter(const regression_parameter& p) {
    check_size_match("record_regression::set_parameter", "theta", p.theta.size(), "design columns", layout_.columns());
    check_finite("record_regression::set_parameter", "theta", p.theta);
    check_positive_finite("record_regression::set_parameter", "variance", p.variance);
    theta_ = p;
  }
  /// Replaces the records (d x n covariates, n responses; finite); the sums are recomputed.
  void set_records(const Eigen::MatrixXd& x, const Eigen::VectorXd& y) {
    constexpr const char* f = "record_regression::set_records";
    check_size_match(f, "covariate rows", x.rows(), "covariates d", layout_.covariates());
    check_size_match(f, "covariate columns", x.cols(), "n", records_x_.cols());
    check_size_match(f, "responses", y.size(), "n", records_y_.size());
    check_finite(f, "covariates", x);
    check_finite(f, "responses", y);
    records_x_ = x;
    records_y_ = y;
    resum();
  }
  /// @{
  /// The latent covariates (d x n) and responses.
  const Eigen::MatrixXd& covariates() const noexcept { return records_x_; }
  const Eigen::VectorXd& responses() const noexcept { return records_y_; }
  /// @}
  /// The Gram matrix [X~ y]^T [X~ y] of the unclamped records (what the NIG update is conditioned on).
  const Eigen::MatrixXd& gram() const noexcept { return gram_; }
  /// S: the sum of the clamped records' statistics (what the mechanism released a noisy copy of).
  const Eigen::VectorXd& release_sum() const noexcept { return release_sum_; }
  /// @{
  /// The covariate law's current mean and covariance (fixed, or the last NIW draw, read from the hierarchical model).
  const Eigen::VectorXd& covariate_mean() const noexcept { return hierarchical_ ? hierarchical_->mean() : mu_x_; }
  const Eigen::MatrixXd& covariate_covariance() const noexcept { return hierarchical_ ? hierarchical_->covariance() : sigma_x_; }
  /// @}
  /// Accepted / proposed record updates so far (1 before any).
  double record_acceptance() const noexcept {
    return proposed_ == 0 ? 1.0 : static_cast<double>(accepted_) / static_cast<double>(proposed_);
  }
  /// The smallest log alpha computed so far (0 before any change of contribution was proposed).
  double smallest_log_acceptance() const noexcept { return smallest_log_alpha_; }
  /// Nothing is ever repaired or retried: all zero.
  const numerical_events& events() const noexcept { return events_; }

 private:
  // The checks and storage shared by both constructors.
  record_regression(const regression_layout& layout, const nig_regression_prior& prior,
                    const std::vector<interval>& covariate_bounds, interval response_bounds, const Mechanism& mechanism,
                    const Eigen::VectorXd& z, double n, record_init init)
      : layout_(layout), prior_(prior), posterior_(prior), mechanism_(mechanism), response_bounds_(response_bounds), n_(n) {
    constexpr const char* f = "record_regression";
    if (init != record_init::prior && init != record_init::consistent)
      throw_invalid(f, "init", static_cast<double>(static_cast<int>(init)), "record_init::prior or record_init::consistent");
    detail::check_regression_release(f, layout_, prior_, covariate_bounds, response_bounds, z);
    check_record_count(f, n);
    if (!(std::floor(n) == n && n <= max_records)) throw_invalid(f, "n", n, "a whole number in [1, 1e7]");
    // Each record keeps its D contributions: n D doubles (at most 800 MB).
    if (!(n * static_cast<double>(layout_.size()) <= max_stored_contributions))
      throw_invalid(f, "n", n,
                    "at most " + std::to_string(static_cast<long long>(max_stored_contributions / layout_.size())) +
                        " records for a layout of " + std::to_string(layout_.size()) +
                        " statistics (n D <= 1e8 stored contributions; beyond it gibbs_ss is the tool)");
    detail::check_regression_reachable(f, layout_, covariate_bounds, response_bounds, z, n, noise_scale(mechanism));
    covariate_bounds_ = covariate_bounds;
    z_ = z;
    const int d = layout_.covariates();
    const auto count = static_cast<Eigen::Index>(n);
    records_x_.resize(d, count);
    records_y_.resize(count);
    contributions_.resize(layout_.size(), count);
    release_sum_.resize(layout_.size());
    proposed_sum_.resize(layout_.size());
    c_new_.resize(layout_.size());
    x_new_.resize(d);
    e_.resize(d);
    u_.resize(layout_.columns() + 1);
  }

  // The Cholesky factor of the current covariate covariance (into llt_x_'s storage: no allocation after the first).
  void factor_covariate_law() {
    llt_x_.compute(covariate_covariance());
    if (llt_x_.info() != Eigen::Success)
      throw std::domain_error("record_regression: the covariate covariance is not positive definite");
  }

  // A record (x_new_, returned y) from the model at p and the current covariate law, its contribution into c_new_.
  template <random_engine G>
  double draw_proposal(const regression_parameter& p, G& g) {
    const double y_new = detail::draw_regression_record(layout_, llt_x_, covariate_mean(), p.theta, p.variance, e_, x_new_, g);
    contribution(x_new_, y_new, u_, c_new_);
    return y_new;
  }

  // theta from the prior, records from the model, then the sums; the release must have positive density there.
  // record_init::consistent then runs greedy passes as record_gibbs_releases does (a record is replaced when
  // log p(z | S) rises), alternating two proposals: the model at a fresh (theta', sigma'^2) from the prior and the
  // current covariate law, and records uniform in the declared box (a tight covariate law drawn from the NIW prior
  // cannot reach the release's second moments: with model proposals alone |S - z|_1 fell only from about 400 to 330
  // in the test, with both to about 40); then (theta, sigma^2[, mu_x, Sigma_x]) are drawn given the records.
  template <random_engine G>
  void start(G& g, record_init init) {
    prior_.draw(g, theta_);
    for (Eigen::Index i = 0; i < records_x_.cols(); ++i) {
      records_y_(i) = draw_proposal(theta_, g);
      records_x_.col(i) = x_new_;
    }
    resum();
    if (init == record_init::consistent) {
      regression_parameter proposal = theta_;
      int idle = 0;
      for (int pass = 0; pass < record_init_passes && idle < 5; ++pass) {
        prior_.draw(g, proposal);
        bool moved = false;
        const bool uniform = pass % 2 == 1;
        for (Eigen::Index i = 0; i < records_x_.cols(); ++i) {
          double y_new = 0.0;
          if (uniform) {
            for (int j = 0; j < layout_.covariates(); ++j) {
              const auto& b = covariate_bounds_[static_cast<std::size_t>(j)];
              x_new_(j) = b.lo + (b.hi - b.lo) * draw_uniform(g);
            }
            y_new = response_bounds_.lo + (response_bounds_.hi - response_bounds_.lo) * draw_uniform(g);
            contribution(x_new_, y_new, u_, c_new_);
          } else {
            y_new = draw_proposal(proposal, g);
          }
          if (c_new_ == contributions_.col(i)) continue;
          proposed_sum_ = release_sum_;
          proposed_sum_ -= contributions_.col(i);
          proposed_sum_ += c_new_;
          double log_new = 0.0;
          if (!(change(proposed_sum_, log_new) > 0.0)) continue;
          release_sum_.swap(proposed_sum_);
          log_release_ = log_new;
          contributions_.col(i) = c_new_;
          records_x_.col(i) = x_new_;
          records_y_(i) = y_new;
          moved = true;
        }
        resum();
        idle = moved ? 0 : idle + 1;
      }
      update_parameters(g);
    }
    if (!(log_release_ > -std::numeric_limits<double>::infinity()))
      throw std::domain_error("record_regression: the release has zero density at the initial records (log density " +
                              std::to_string(log_release_) + "); accepted: a mechanism with positive density there");
  }

  template <random_engine G>
  void update_parameters(G& g) {
    const int p = layout_.columns();
    prior_.update(gram_.topLeftCorner(p, p), gram_.col(p).head(p), gram_(p, p), n_, posterior_);
    posterior_.draw(g, theta_);
    if (hierarchical_) {
      hierarchical_->update(layout_, gram_, n_, g);
      factor_covariate_law();
    }
  }

  void contribution(const Eigen::Ref<const Eigen::VectorXd>& x, double y, Eigen::VectorXd& u, Eigen::VectorXd& out) const {
    detail::clamped_regression_contribution(layout_, covariate_bounds_, response_bounds_, x, y, u, out);
  }

  // log p(z | proposed) - log p(z | S), and log p(z | proposed) into log_new: the mechanism's log_density_change when
  // it has one (a running sum within a sweep; resum() recomputes log p(z | S) at its end), else one log_likelihood.
  double change(const Eigen::VectorXd& proposed, double& log_new) const {
    if constexpr (density_change_mechanism<Mechanism>) {
      const double delta = mechanism_.log_density_change(z_, release_sum_, proposed);
      log_new = log_release_ + delta;
      return delta;
    } else {
      log_new = mechanism_.log_likelihood(z_, proposed);
      return log_new - log_release_;
    }
  }

  // The unclamped Gram matrix, the contributions and S from the records; then log p(z | S).
  void resum() {
    const int p = layout_.columns();
    gram_.setZero(p + 1, p + 1);
    release_sum_.setZero();
    for (Eigen::Index i = 0; i < records_x_.cols(); ++i) {
      detail::add_regression_row(layout_, records_x_.col(i), records_y_(i), u_, gram_);
      contribution(records_x_.col(i), records_y_(i), u_, c_new_);
      contributions_.col(i) = c_new_;
      release_sum_ += c_new_;
    }
    for (int j = 0; j <= p; ++j)
      for (int i = 0; i < j; ++i) gram_(i, j) = gram_(j, i);
    log_release_ = mechanism_.log_likelihood(z_, release_sum_);
  }

  regression_layout layout_;
  nig_regression_prior prior_, posterior_;
  Mechanism mechanism_;
  std::vector<interval> covariate_bounds_;
  interval response_bounds_;
  double n_;
  Eigen::VectorXd z_;
  std::optional<hierarchical_normal_covariates> hierarchical_;
  Eigen::VectorXd mu_x_;               // the fixed law's mean (unused with a hierarchical law)
  Eigen::MatrixXd sigma_x_;            // the fixed law's covariance (unused with a hierarchical law)
  Eigen::LLT<Eigen::MatrixXd> llt_x_;  // the current covariance's Cholesky factor
  regression_parameter theta_;
  Eigen::MatrixXd records_x_;      // d x n
  Eigen::VectorXd records_y_;      // n
  Eigen::MatrixXd contributions_;  // D x n: c(x_i, y_i)
  Eigen::MatrixXd gram_;           // (p + 1) x (p + 1), unclamped
  Eigen::VectorXd release_sum_, proposed_sum_, c_new_, x_new_, e_;
  Eigen::VectorXd u_;  // scratch: a record's row (x~, y)
  double log_release_ = 0.0;
  std::uint64_t proposed_ = 0, accepted_ = 0;
  double smallest_log_alpha_ = 0.0;
  numerical_events events_;
};

}  // namespace privpost
