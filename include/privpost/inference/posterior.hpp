// privpost/inference/posterior.hpp
// posterior: the draws of one or more Markov chains for a scalar or vector parameter, with summaries (mean, sd,
// quantiles, central intervals) and convergence diagnostics (split rank-normalised R-hat, bulk and tail ESS).
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "privpost/core/errors.hpp"
#include "privpost/diagnostics/calibration.hpp"
#include "privpost/diagnostics/convergence.hpp"
#include "privpost/diagnostics/sample_quantile.hpp"

namespace privpost {

/// Draws per chain: chain c is a matrix with one row per draw and one column per parameter coordinate.
class posterior {
 public:
  /// Every chain must have the same shape, at least one draw and one coordinate, and only finite values.
  explicit posterior(std::vector<Eigen::MatrixXd> chains) : chains_(std::move(chains)) {
    if (chains_.empty()) throw_invalid("posterior", "number of chains", 0.0, "at least 1");
    const auto rows = chains_.front().rows(), cols = chains_.front().cols();
    if (rows < 1) throw_invalid("posterior", "draws per chain", static_cast<double>(rows), "at least 1");
    if (cols < 1) throw_invalid("posterior", "parameter dimension", static_cast<double>(cols), "at least 1");
    for (const auto& c : chains_) {
      check_size_match("posterior", "chain draws", c.rows(), "first chain draws", rows);
      check_size_match("posterior", "chain dimension", c.cols(), "first chain dimension", cols);
      check_finite("posterior", "chain draws", c);
    }
  }

  /// Number of chains.
  Eigen::Index num_chains() const noexcept { return static_cast<Eigen::Index>(chains_.size()); }
  /// Draws per chain.
  Eigen::Index draws_per_chain() const noexcept { return chains_.front().rows(); }
  /// Length of the parameter vector.
  Eigen::Index dimension() const noexcept { return chains_.front().cols(); }
  /// Draws over all chains.
  Eigen::Index size() const noexcept { return num_chains() * draws_per_chain(); }
  /// The chains: one matrix each, rows are draws and columns coordinates.
  const std::vector<Eigen::MatrixXd>& chains() const noexcept { return chains_; }

  /// All draws of one coordinate, chains concatenated.
  Eigen::VectorXd draws(Eigen::Index coordinate = 0) const {
    check_coordinate(coordinate);
    Eigen::VectorXd out(size());
    for (Eigen::Index c = 0; c < num_chains(); ++c)
      out.segment(c * draws_per_chain(), draws_per_chain()) = chains_[static_cast<std::size_t>(c)].col(coordinate);
    return out;
  }

  /// All draws as a matrix (rows are draws, chains concatenated), for MMD and multivariate summaries.
  Eigen::MatrixXd draw_matrix() const {
    Eigen::MatrixXd out(size(), dimension());
    for (Eigen::Index c = 0; c < num_chains(); ++c)
      out.middleRows(c * draws_per_chain(), draws_per_chain()) = chains_[static_cast<std::size_t>(c)];
    return out;
  }

  /// One coordinate as a draws x chains matrix (the layout of the convergence diagnostics).
  Eigen::MatrixXd chain_matrix(Eigen::Index coordinate = 0) const {
    check_coordinate(coordinate);
    Eigen::MatrixXd out(draws_per_chain(), num_chains());
    for (Eigen::Index c = 0; c < num_chains(); ++c) out.col(c) = chains_[static_cast<std::size_t>(c)].col(coordinate);
    return out;
  }

  /// Mean of the draws of a coordinate, over all chains.
  double mean(Eigen::Index coordinate = 0) const { return draws(coordinate).mean(); }

  /// Sample standard deviation (n - 1 denominator); 0 for a single draw.
  double sd(Eigen::Index coordinate = 0) const {
    const Eigen::VectorXd x = draws(coordinate);
    if (x.size() < 2) return 0.0;
    return std::sqrt((x.array() - x.mean()).square().sum() / static_cast<double>(x.size() - 1));
  }

  /// The p-quantile of the draws of a coordinate (sample_quantile).
  double quantile(double p, Eigen::Index coordinate = 0) const { return sample_quantile(draws(coordinate), p); }

  /// The central interval holding `level` of the draws.
  credible_interval interval(double level, Eigen::Index coordinate = 0) const {
    return central_interval(draws(coordinate), level);
  }

  /// Rank-normalised split R-hat of a coordinate (Vehtari et al. 2021; diagnostics/convergence.hpp).
  double rhat(Eigen::Index coordinate = 0) const { return privpost::rhat(chain_matrix(coordinate)); }
  /// Bulk effective sample size of a coordinate (Vehtari et al. 2021).
  double ess_bulk(Eigen::Index coordinate = 0) const { return privpost::ess_bulk(chain_matrix(coordinate)); }
  /// Tail effective sample size of a coordinate (Vehtari et al. 2021).
  double ess_tail(Eigen::Index coordinate = 0) const { return privpost::ess_tail(chain_matrix(coordinate)); }
  /// ESS of the mean of the draws as given (split chains, no rank normalisation; diagnostics/convergence.hpp).
  double ess_mean(Eigen::Index coordinate = 0) const { return privpost::ess_mean(chain_matrix(coordinate)); }
  /// Monte Carlo standard error of the posterior mean estimate: sd / sqrt(ess_mean), as R's posterior::mcse_mean.
  /// NaN where the ESS is undefined (every draw equal).
  double mcse_mean(Eigen::Index coordinate = 0) const { return sd(coordinate) / std::sqrt(ess_mean(coordinate)); }

  /// The largest R-hat over the coordinates [begin, end) (every coordinate by default): the one number a
  /// convergence rule such as R-hat <= 1.01 is checked against. Coordinates whose R-hat is undefined (every draw
  /// equal, for example a cell fixed by the model) are skipped; NaN when every one of them is.
  double max_rhat(Eigen::Index begin = 0, Eigen::Index end = -1) const {
    return worst_over(
        begin, end, [this](Eigen::Index j) { return rhat(j); }, [](double a, double b) { return a > b; });
  }
  /// The smallest bulk ESS over the coordinates [begin, end) (every coordinate by default); undefined ones skipped,
  /// NaN when every one is, as max_rhat.
  double min_ess_bulk(Eigen::Index begin = 0, Eigen::Index end = -1) const {
    return worst_over(
        begin, end, [this](Eigen::Index j) { return ess_bulk(j); }, [](double a, double b) { return a < b; });
  }

 private:
  // The worst of a diagnostic over [begin, end) (end -1: through the last coordinate), `worse` ordering two values;
  // NaN values (undefined diagnostics) are skipped.
  template <class Diagnostic, class Worse>
  double worst_over(Eigen::Index begin, Eigen::Index end, Diagnostic diagnostic, Worse worse) const {
    if (end == -1) end = dimension();
    if (end < 1 || end > dimension())
      throw_invalid("posterior", "end of the coordinate range", static_cast<double>(end),
                    "-1 (every coordinate) or an index in [1, " + std::to_string(dimension()) + "]");
    if (begin < 0 || begin >= end)
      throw_invalid("posterior", "beginning of the coordinate range", static_cast<double>(begin),
                    "an index in [0, " + std::to_string(end - 1) + "]");
    double worst = std::numeric_limits<double>::quiet_NaN();
    for (Eigen::Index j = begin; j < end; ++j) {
      const double v = diagnostic(j);
      if (!std::isnan(v) && (std::isnan(worst) || worse(v, worst))) worst = v;
    }
    return worst;
  }

  void check_coordinate(Eigen::Index coordinate) const {
    if (coordinate < 0 || coordinate >= dimension())
      throw_invalid("posterior", "coordinate", static_cast<double>(coordinate),
                    "an index in [0, " + std::to_string(dimension() - 1) + "]");
  }

  std::vector<Eigen::MatrixXd> chains_;
};

}  // namespace privpost
