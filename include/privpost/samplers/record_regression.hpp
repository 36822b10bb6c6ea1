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
// The sampler is the record-level frame (samplers/record_frame.hpp) over regression_record_model, whose block for
// theta | records is: (theta, sigma^2) by the NIG update on the Gram matrix of the *unclamped* records, then (mu_x,
// Sigma_x) | covariates (hierarchical law). Every record in turn is then updated by Metropolis-Hastings with the model
// as proposal,
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

/// A regression record: the covariates x (d entries, without the intercept column) and the response y.
struct regression_record {
  /// The covariates.
  Eigen::VectorXd x;
  /// The response.
  double y = 0.0;
};

/// Linear regression released by SSP of clamped records as a record_model (samplers/record_frame.hpp): theta and
/// sigma^2 by the NIG update on the Gram matrix of the unclamped records, the covariate law fixed or hierarchical (its
/// NIW posterior drawn with theta), records (x, y) from the model, and the layout's entries of u u^T of the record
/// clamped into the declared box as its contribution. Records and contributions are drawn and written in place.
class regression_record_model {
 public:
  /// @{
  /// The model's types (record_model).
  using parameter_type = regression_parameter;
  using record_type = regression_record;
  using vector_type = Eigen::VectorXd;
  /// @}

  /// The layout, the prior of (theta, sigma^2) and the box the data owner clamped into; the covariate law is set next
  /// (hierarchical or fixed). Checked by record_regression.
  regression_record_model(const regression_layout& layout, const nig_regression_prior& prior,
                          const std::vector<interval>& covariate_bounds, interval response_bounds)
      : layout_(layout),
        prior_(prior),
        posterior_(prior),
        covariate_bounds_(covariate_bounds),
        response_bounds_(response_bounds),
        ranges_(layout.statistic_ranges(covariate_bounds, response_bounds)),
        e_(Eigen::VectorXd::Zero(layout.covariates())),
        u_(Eigen::VectorXd::Zero(layout.columns() + 1)) {}

  /// (mu_x, Sigma_x) ~ covariate_prior (NIW), drawn now and updated with theta every sweep. Returns the model.
  template <random_engine G>
  regression_record_model& set_hierarchical(const niw_hyperprior& covariate_prior, G& g) {
    hierarchical_.emplace(layout_, covariate_prior, g);
    factor_covariate_law();
    return *this;
  }
  /// x ~ N(law.mean, law.covariance) in every sweep. std::invalid_argument naming the sampler `f` for a wrong size, a
  /// non-finite mean or a covariance that is not symmetric positive definite. Returns the model.
  regression_record_model& set_fixed(const normal_covariate_law& law, const char* f = "record_regression") {
    check_size_match(f, "covariate law mean", law.mean.size(), "covariates d", layout_.covariates());
    check_finite(f, "covariate law mean", law.mean);
    check_symmetric_positive_definite(f, "covariate law covariance", law.covariance);
    mu_x_ = law.mean;
    sigma_x_ = law.covariance;
    factor_covariate_law();
    return *this;
  }

  /// (theta, sigma^2) from the prior.
  template <random_engine G>
  parameter_type draw_prior(G& g) const {
    parameter_type p;
    prior_.draw(g, p);
    return p;
  }
  /// A record from the model at p and the current covariate law, into out (in place: out.x keeps its storage).
  template <random_engine G>
  void draw_record(const parameter_type& p, std::size_t, G& g, record_type& out) const {
    out.y = detail::draw_regression_record(layout_, llt_x_, covariate_mean(), p.theta, p.variance, e_, out.x, g);
  }
  /// The same, returned.
  template <random_engine G>
  record_type draw_record(const parameter_type& p, std::size_t i, G& g) const {
    record_type r{Eigen::VectorXd(layout_.covariates()), 0.0};
    draw_record(p, i, g, r);
    return r;
  }
  /// The record's contribution c(x, y): the layout's entries of u u^T, u = (clamp(x~), clamp(y)), into out.
  void contribution(const record_type& r, std::size_t, Eigen::VectorXd& out) const {
    detail::clamped_regression_contribution(layout_, covariate_bounds_, response_bounds_, r.x, r.y, u_, out);
  }
  /// The same, returned.
  Eigen::VectorXd contribution(const record_type& r, std::size_t i) const {
    Eigen::VectorXd out(layout_.size());
    contribution(r, i, out);
    return out;
  }
  /// (theta, sigma^2) | records (the NIG update on the records' Gram matrix), then (mu_x, Sigma_x) | covariates for a
  /// hierarchical law.
  template <random_engine G>
  void update_parameter(parameter_type& p, const std::vector<record_type>& records, G& g) {
    summarise(records, gram_);
    update_from_summary(p, gram_, static_cast<double>(records.size()), g);
  }
  /// The same from the Gram matrix [X~ y]^T [X~ y] of n records (the sharded sampler's, combined over its shards).
  template <random_engine G>
  void update_from_summary(parameter_type& p, const Eigen::MatrixXd& gram, double n, G& g) {
    const int q = layout_.columns();
    prior_.update(gram.topLeftCorner(q, q), gram.col(q).head(q), gram(q, q), n, posterior_);
    posterior_.draw(g, p);
    if (hierarchical_) {
      hierarchical_->update(layout_, gram, n, g);
      factor_covariate_law();
    }
  }
  /// (theta, sigma^2) as a vector.
  Eigen::VectorXd parameter_vector(const parameter_type& p) const {
    Eigen::VectorXd v(p.theta.size() + 1);
    v << p.theta, p.variance;
    return v;
  }
  /// Entry j of n clamped records' summed contributions lies in n times its range over the box.
  std::pair<double, double> contribution_sum_range(family_statistic, double n, int j) const {
    const auto& r = ranges_[static_cast<std::size_t>(j)];
    return {n * r.lo, n * r.hi};
  }
  /// record_init::consistent's proposals: the model at a fresh (theta', sigma'^2) from the prior and the current
  /// covariate law on even passes, records uniform in the declared box on odd ones (a tight covariate law drawn from
  /// the NIW prior cannot reach the release's second moments: with model proposals alone |S - z|_1 fell only from
  /// about 400 to 330 in the test, with both to about 40).
  template <random_engine G>
  void draw_start_record(int pass, const parameter_type& p, std::size_t i, G& g, record_type& out) const {
    if (pass % 2 == 0) return draw_record(p, i, g, out);
    for (int j = 0; j < layout_.covariates(); ++j) {
      const auto& b = covariate_bounds_[static_cast<std::size_t>(j)];
      out.x(j) = b.lo + (b.hi - b.lo) * draw_uniform(g);
    }
    out.y = response_bounds_.lo + (response_bounds_.hi - response_bounds_.lo) * draw_uniform(g);
  }

  /// [X~ y]^T [X~ y] of the records, unclamped, into gram ((p + 1) x (p + 1), symmetric): the summary a sharded chain
  /// adds over its shards (summed_record_model).
  void summarise(const std::vector<record_type>& records, Eigen::MatrixXd& gram) const {
    const int q = layout_.columns();
    gram.setZero(q + 1, q + 1);
    for (const auto& r : records) detail::add_regression_row(layout_, r.x, r.y, u_, gram);
    for (int j = 0; j <= q; ++j)
      for (int i = 0; i < j; ++i) gram(i, j) = gram(j, i);
  }
  /// @{
  /// The covariate law's current mean and covariance (fixed, or the last NIW draw).
  const Eigen::VectorXd& covariate_mean() const noexcept { return hierarchical_ ? hierarchical_->mean() : mu_x_; }
  const Eigen::MatrixXd& covariate_covariance() const noexcept { return hierarchical_ ? hierarchical_->covariance() : sigma_x_; }
  /// @}
  /// The layout.
  const regression_layout& layout() const noexcept { return layout_; }

 private:
  // The Cholesky factor of the current covariate covariance (into llt_x_'s storage: no allocation after the first).
  void factor_covariate_law() {
    llt_x_.compute(covariate_covariance());
    if (llt_x_.info() != Eigen::Success)
      throw std::domain_error("record_regression: the covariate covariance is not positive definite");
  }

  regression_layout layout_;
  nig_regression_prior prior_, posterior_;
  std::vector<interval> covariate_bounds_;
  interval response_bounds_;
  std::vector<interval> ranges_;  // each contribution entry's range over the box
  std::optional<hierarchical_normal_covariates> hierarchical_;
  Eigen::VectorXd mu_x_;               // the fixed law's mean (unused with a hierarchical law)
  Eigen::MatrixXd sigma_x_;            // the fixed law's covariance (unused with a hierarchical law)
  Eigen::LLT<Eigen::MatrixXd> llt_x_;  // the current covariance's Cholesky factor
  Eigen::MatrixXd gram_;               // the last update's Gram matrix
  mutable Eigen::VectorXd e_, u_;      // scratch: a record's normal draws; a record's row (x~, y)
};

/// The record-level regression sampler over (theta, sigma^2[, mu_x, Sigma_x], records): record_frame over
/// regression_record_model with one release. Models privpost::sampler; parameter_vector() is (theta, sigma^2), as the
/// regression studies and `privpost-infer` report. Sweeps allocate nothing.
template <release_mechanism Mechanism>
requires std::same_as<typename Mechanism::vector_type, Eigen::VectorXd>
class record_regression : public record_frame<regression_record_model, record_release<Mechanism>> {
  using base = record_frame<regression_record_model, record_release<Mechanism>>;

 public:
  /// The most contributions n D a chain stores.
  static constexpr double max_stored_contributions = 1e8;

  /// Hierarchical covariates: (mu_x, Sigma_x) ~ covariate_prior (NIW), updated each sweep. The layout needs its
  /// intercept column (as hierarchical_normal_covariates does).
  template <random_engine G>
  record_regression(const regression_layout& layout, const nig_regression_prior& prior, const niw_hyperprior& covariate_prior,
                    const std::vector<interval>& covariate_bounds, interval response_bounds, const Mechanism& mechanism,
                    const Eigen::VectorXd& z, double n, G& g, record_init init = record_init::prior)
      : base("record_regression",
             checked_model(layout, prior, covariate_bounds, response_bounds, mechanism, z, n, init)
                 .set_hierarchical(covariate_prior, g),
             n, g, init, record_release<Mechanism>(mechanism, z)) {}

  /// Fixed covariates: x ~ N(law.mean, law.covariance) in every sweep.
  template <random_engine G>
  record_regression(const regression_layout& layout, const nig_regression_prior& prior, const normal_covariate_law& law,
                    const std::vector<interval>& covariate_bounds, interval response_bounds, const Mechanism& mechanism,
                    const Eigen::VectorXd& z, double n, G& g, record_init init = record_init::prior)
      : base("record_regression",
             checked_model(layout, prior, covariate_bounds, response_bounds, mechanism, z, n, init).set_fixed(law), n, g, init,
             record_release<Mechanism>(mechanism, z)) {}

  using base::log_acceptance;
  using base::release_sum;
  using base::set_parameter;
  using base::set_records;
  using base::update_record;

  /// log alpha of replacing record i by (x, y) (before the min with 0): log p(z | S - c_i + c(x, y)) - log p(z | S).
  double log_acceptance(Eigen::Index i, const Eigen::VectorXd& x, double y) const {
    check_size_match("record_regression::log_acceptance", "x", x.size(), "covariates d", this->model().layout().covariates());
    return base::log_acceptance(static_cast<std::size_t>(i), regression_record{x, y});
  }
  /// One Metropolis-Hastings update of record i (samplers/record_frame.hpp).
  template <random_engine G>
  bool update_record(Eigen::Index i, G& g) {
    return base::update_record(static_cast<std::size_t>(i), g);
  }
  /// Sets (theta, sigma^2) (the kernel tests hold it fixed and call update_record). std::invalid_argument for a wrong
  /// size or a variance that is not positive and finite.
  void set_parameter(const regression_parameter& p) {
    check_size_match("record_regression::set_parameter", "theta", p.theta.size(), "design columns",
                     this->model().layout().columns());
    check_finite("record_regression::set_parameter", "theta", p.theta);
    check_positive_finite("record_regression::set_parameter", "variance", p.variance);
    base::set_parameter(p);
  }
  /// Replaces the records (d x n covariates, n responses; finite); the sums are recomputed.
  void set_records(const Eigen::MatrixXd& x, const Eigen::VectorXd& y) {
    constexpr const char* f = "record_regression::set_records";
    const auto count = static_cast<Eigen::Index>(this->records().size());
    check_size_match(f, "covariate rows", x.rows(), "covariates d", this->model().layout().covariates());
    check_size_match(f, "covariate columns", x.cols(), "n", count);
    check_size_match(f, "responses", y.size(), "n", count);
    check_finite(f, "covariates", x);
    check_finite(f, "responses", y);
    std::vector<regression_record> records(static_cast<std::size_t>(count));
    for (Eigen::Index i = 0; i < count; ++i) records[static_cast<std::size_t>(i)] = {x.col(i), y(i)};
    base::set_records(records);
  }
  /// @{
  /// The latent covariates (d x n) and responses.
  Eigen::MatrixXd covariates() const {
    Eigen::MatrixXd x(this->model().layout().covariates(), static_cast<Eigen::Index>(this->records().size()));
    for (std::size_t i = 0; i < this->records().size(); ++i) x.col(static_cast<Eigen::Index>(i)) = this->records()[i].x;
    return x;
  }
  Eigen::VectorXd responses() const {
    Eigen::VectorXd y(static_cast<Eigen::Index>(this->records().size()));
    for (std::size_t i = 0; i < this->records().size(); ++i) y(static_cast<Eigen::Index>(i)) = this->records()[i].y;
    return y;
  }
  /// @}
  /// The Gram matrix [X~ y]^T [X~ y] of the unclamped records (what the NIG update is conditioned on).
  Eigen::MatrixXd gram() const {
    Eigen::MatrixXd gram;
    this->model().summarise(this->records(), gram);
    return gram;
  }
  /// S: the sum of the clamped records' statistics (what the mechanism released a noisy copy of).
  const Eigen::VectorXd& release_sum() const { return base::release_sum(0); }
  /// @{
  /// The covariate law's current mean and covariance (fixed, or the last NIW draw).
  const Eigen::VectorXd& covariate_mean() const noexcept { return this->model().covariate_mean(); }
  const Eigen::MatrixXd& covariate_covariance() const noexcept { return this->model().covariate_covariance(); }
  /// @}

 private:
  // The checks of both constructors, before anything is drawn; the model with its covariate law still to set.
  static regression_record_model checked_model(const regression_layout& layout, const nig_regression_prior& prior,
                                               const std::vector<interval>& covariate_bounds, interval response_bounds,
                                               const Mechanism& mechanism, const Eigen::VectorXd& z, double n, record_init init) {
    constexpr const char* f = "record_regression";
    if (init != record_init::prior && init != record_init::consistent)
      throw_invalid(f, "init", static_cast<double>(static_cast<int>(init)), "record_init::prior or record_init::consistent");
    detail::check_regression_release(f, layout, prior, covariate_bounds, response_bounds, z);
    check_record_count(f, n);
    if (!(std::floor(n) == n && n <= record_frame_max_records)) throw_invalid(f, "n", n, "a whole number in [1, 1e7]");
    // Each record keeps its D contributions: n D doubles (at most 800 MB).
    if (!(n * static_cast<double>(layout.size()) <= max_stored_contributions))
      throw_invalid(f, "n", n,
                    "at most " + std::to_string(static_cast<long long>(max_stored_contributions / layout.size())) +
                        " records for a layout of " + std::to_string(layout.size()) +
                        " statistics (n D <= 1e8 stored contributions; beyond it gibbs_ss is the tool)");
    detail::check_regression_reachable(f, layout, covariate_bounds, response_bounds, z, n, noise_scale(mechanism));
    return regression_record_model(layout, prior, covariate_bounds, response_bounds);
  }
};

}  // namespace privpost
