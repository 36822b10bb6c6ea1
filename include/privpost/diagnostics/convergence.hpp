// privpost/diagnostics/convergence.hpp
// Split rank-normalised R-hat and bulk/tail effective sample size (Vehtari, Gelman, Simpson, Carpenter & Buerkner 2021),
// for draws arranged as a matrix with one column per chain. Geyer's initial monotone sequence truncates the autocorrelations.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "privpost/core/errors.hpp"
#include "privpost/diagnostics/sample_quantile.hpp"

namespace privpost {

namespace detail {

inline void check_chains(const char* function, const Eigen::MatrixXd& x) {
  if (x.rows() < 4) throw_invalid(function, "draws per chain", static_cast<double>(x.rows()), "at least 4");
  if (x.cols() < 1) throw_invalid(function, "number of chains", static_cast<double>(x.cols()), "at least 1");
  check_finite(function, "draws", x);
}

// Each chain split into its first and second half (the middle draw dropped for odd lengths).
inline Eigen::MatrixXd split_chains(const Eigen::MatrixXd& x) {
  const Eigen::Index half = x.rows() / 2;
  Eigen::MatrixXd out(half, 2 * x.cols());
  for (Eigen::Index c = 0; c < x.cols(); ++c) {
    out.col(2 * c) = x.col(c).head(half);
    out.col(2 * c + 1) = x.col(c).tail(half);
  }
  return out;
}

// Normal scores of the pooled ranks (average ranks for ties), Blom's offset: Phi^{-1}((r - 3/8) / (S + 1/4)).
inline Eigen::MatrixXd rank_normalize(const Eigen::MatrixXd& x) {
  const Eigen::Index s = x.size();
  std::vector<Eigen::Index> idx(static_cast<std::size_t>(s));
  std::iota(idx.begin(), idx.end(), Eigen::Index{0});
  const double* d = x.data();
  std::stable_sort(idx.begin(), idx.end(), [d](Eigen::Index a, Eigen::Index b) { return d[a] < d[b]; });
  Eigen::MatrixXd z(x.rows(), x.cols());
  const boost::math::normal_distribution<double> std_normal;
  for (Eigen::Index i = 0; i < s;) {
    Eigen::Index j = i;
    while (j + 1 < s && d[idx[static_cast<std::size_t>(j + 1)]] == d[idx[static_cast<std::size_t>(i)]]) ++j;
    const double rank = 0.5 * static_cast<double>(i + j) + 1.0;  // average 1-based rank of the tie group
    const double score = boost::math::quantile(std_normal, (rank - 0.375) / (static_cast<double>(s) + 0.25));
    for (Eigen::Index k = i; k <= j; ++k) z.data()[idx[static_cast<std::size_t>(k)]] = score;
    i = j + 1;
  }
  return z;
}

inline double rhat_basic(const Eigen::MatrixXd& x) {
  const double n = static_cast<double>(x.rows());
  const Eigen::VectorXd means = x.colwise().mean();
  double within = 0.0;
  for (Eigen::Index c = 0; c < x.cols(); ++c) within += (x.col(c).array() - means(c)).square().sum() / (n - 1.0);
  within /= static_cast<double>(x.cols());
  const double between =
      (x.cols() > 1) ? n * (means.array() - means.mean()).square().sum() / static_cast<double>(x.cols() - 1) : 0.0;
  if (!(within > 0.0)) return std::numeric_limits<double>::quiet_NaN();
  return std::sqrt((between / within + n - 1.0) / n);
}

// Biased (1/N) autocovariance of one chain at one lag.
inline double autocovariance(const Eigen::Ref<const Eigen::VectorXd>& centred, Eigen::Index lag) {
  const Eigen::Index n = centred.size();
  return centred.head(n - lag).dot(centred.tail(n - lag)) / static_cast<double>(n);
}

// ESS of the chains as given (already split), following posterior::ess_rfun.
inline double ess_raw(const Eigen::MatrixXd& x) {
  const Eigen::Index n = x.rows();
  const Eigen::Index m = x.cols();
  Eigen::MatrixXd centred = x.rowwise() - x.colwise().mean();
  const Eigen::VectorXd means = x.colwise().mean();
  auto mean_acov = [&](Eigen::Index lag) {
    double total = 0.0;
    for (Eigen::Index c = 0; c < m; ++c) total += autocovariance(centred.col(c), lag);
    return total / static_cast<double>(m);
  };
  const double dn = static_cast<double>(n);
  const double mean_var = mean_acov(0) * dn / (dn - 1.0);
  double var_plus = mean_var * (dn - 1.0) / dn;
  if (m > 1) var_plus += (means.array() - means.mean()).square().sum() / static_cast<double>(m - 1);
  if (!(var_plus > 0.0)) return std::numeric_limits<double>::quiet_NaN();

  std::vector<double> rho(static_cast<std::size_t>(n) + 2, 0.0);
  auto rho_at = [&](Eigen::Index lag) { return 1.0 - (mean_var - mean_acov(lag)) / var_plus; };
  Eigen::Index t = 0;
  double even = 1.0;
  double odd = rho_at(1);
  rho[0] = even;
  rho[1] = odd;
  while (t < n - 5 && even + odd > 0.0) {
    t += 2;
    even = rho_at(t);
    odd = rho_at(t + 1);
    if (even + odd >= 0.0) {
      rho[static_cast<std::size_t>(t)] = even;
      rho[static_cast<std::size_t>(t + 1)] = odd;
    }
  }
  const Eigen::Index max_t = t;
  if (even > 0.0) rho[static_cast<std::size_t>(max_t)] = even;
  // Geyer's initial monotone sequence.
  for (Eigen::Index u = 0; u <= max_t - 4;) {
    u += 2;
    const auto k = static_cast<std::size_t>(u);
    if (rho[k] + rho[k + 1] > rho[k - 2] + rho[k - 1]) {
      rho[k] = 0.5 * (rho[k - 2] + rho[k - 1]);
      rho[k + 1] = rho[k];
    }
  }
  const double total = static_cast<double>(n * m);
  double tau = -1.0 + rho[static_cast<std::size_t>(max_t)];
  for (Eigen::Index k = 0; k < max_t; ++k) tau += 2.0 * rho[static_cast<std::size_t>(k)];
  tau = std::max(tau, 1.0 / std::log10(total));
  return total / tau;
}

}  // namespace detail

/// Split rank-normalised R-hat: max of the rank-normalised split R-hat of the draws and of their folded values
/// |x - median| (Vehtari et al. 2021, Sec. 4.2). Columns are chains (>= 4 draws each). NaN if every draw is equal.
inline double rhat(const Eigen::MatrixXd& chains) {
  detail::check_chains("rhat", chains);
  const Eigen::MatrixXd split = detail::split_chains(chains);
  const double median = sample_quantile(Eigen::Map<const Eigen::VectorXd>(chains.data(), chains.size()), 0.5);
  const Eigen::MatrixXd folded = (chains.array() - median).abs().matrix();
  return std::max(detail::rhat_basic(detail::rank_normalize(split)),
                  detail::rhat_basic(detail::rank_normalize(detail::split_chains(folded))));
}

/// Bulk effective sample size: ESS of the rank-normalised split chains (Vehtari et al. 2021, Sec. 4.3).
inline double ess_bulk(const Eigen::MatrixXd& chains) {
  detail::check_chains("ess_bulk", chains);
  return detail::ess_raw(detail::rank_normalize(detail::split_chains(chains)));
}

/// Tail effective sample size: the smaller ESS of the indicators x <= q05 and x <= q95 (split chains).
inline double ess_tail(const Eigen::MatrixXd& chains) {
  detail::check_chains("ess_tail", chains);
  const Eigen::MatrixXd split = detail::split_chains(chains);
  double result = std::numeric_limits<double>::infinity();
  for (double p : {0.05, 0.95}) {
    const double q = sample_quantile(Eigen::Map<const Eigen::VectorXd>(chains.data(), chains.size()), p);
    const Eigen::MatrixXd ind = (split.array() <= q).cast<double>().matrix();
    result = std::min(result, detail::ess_raw(ind));
  }
  return result;
}

/// ESS of the mean of the draws as given (split chains, no rank normalisation): for a known-correlation check.
inline double ess_mean(const Eigen::MatrixXd& chains) {
  detail::check_chains("ess_mean", chains);
  return detail::ess_raw(detail::split_chains(chains));
}

}  // namespace privpost
