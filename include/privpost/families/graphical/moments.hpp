// privpost/families/graphical/moments.hpp
// Moment maps of a pairwise MRF (docs/design-cgm.md Sec. 3.2, 3.6, 5.4): the pseudo-moment MLE on forests (the
// closed-form M-step of CGM-EM), the Bethe entropy (exact on forests), and the exact KL divergence between two models
// through any exact marginal-inference back end.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstdint>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/families/graphical/pairwise_graph.hpp"

namespace privpost {

/// The smallest probability a log is taken of; smaller (zero) moments are floored to it and counted.
inline constexpr double moment_log_floor = 1e-300;

/// The pseudo-moment formula on any pairwise graph: from node and edge marginals mu (table_layout order), writes
/// theta_v = log mu_v and theta_uv = log mu_uv - log mu_u - log mu_v. On a graph with cycles this is the Bethe-approximate
/// MLE (Wainwright, Jaakkola & Willsky 2003): loopy BP on theta has the fixed point mu with unit messages. Moments below
/// moment_log_floor are floored (never -inf) and returned as the count of floors. std::invalid_argument: mu of the
/// wrong size, a negative or non-finite entry.
inline std::uint64_t bethe_moment_parameters(const pairwise_graph& graph, const Eigen::VectorXd& mu, Eigen::VectorXd& theta) {
  constexpr const char* f = "bethe_moment_parameters";
  const table_layout layout(graph);
  check_size_match(f, "mu", mu.size(), "table_layout size", layout.size());
  for (Eigen::Index i = 0; i < mu.size(); ++i)
    if (!(std::isfinite(mu(i)) && mu(i) >= 0.0)) throw_invalid(f, "marginal mu_i", mu(i), "a finite number >= 0");
  std::uint64_t floors = 0;
  auto safe_log = [&](double p) {
    if (p < moment_log_floor) {
      ++floors;
      return std::log(moment_log_floor);
    }
    return std::log(p);
  };
  theta.resize(layout.size());
  for (Eigen::Index i = 0; i < layout.edges_begin(); ++i) theta(i) = safe_log(mu(i));
  for (int e = 0; e < graph.num_edges(); ++e) {
    const auto [u, v] = graph.edge(e);
    const int ku = graph.cardinality(u), kv = graph.cardinality(v);
    const Eigen::Index eo = layout.edge_offset(e), uo = layout.node_offset(u), vo = layout.node_offset(v);
    for (int a = 0; a < ku; ++a)
      for (int c = 0; c < kv; ++c) {
        const Eigen::Index i = eo + static_cast<Eigen::Index>(a) * kv + c;
        theta(i) = safe_log(mu(i)) - theta(uo + a) - theta(vo + c);
      }
  }
  return floors;
}

/// Pseudo-moment MLE on a forest (docs/design-cgm.md Sec. 3.6): the formula of bethe_moment_parameters, which for consistent
/// positive marginals of a forest is the exact MLE: the model of theta has marginals mu. std::invalid_argument also for a graph
/// with a cycle (use bethe_moment_parameters for the Bethe approximation, or an exact M-step).
inline std::uint64_t pseudo_moment_parameters(const pairwise_graph& graph, const Eigen::VectorXd& mu, Eigen::VectorXd& theta) {
  if (!graph.is_forest())
    throw_invalid("pseudo_moment_parameters", "number of edges", graph.num_edges(),
                  "a forest (the closed form is the MLE only without cycles; use an exact M-step otherwise)");
  return bethe_moment_parameters(graph, mu, theta);
}

/// The marginals of MAP-EM's M-step and of the smoothed non-private fit (docs/design-cgm.md Sec. 3.6): mu = (n + alpha) / (N +
/// alpha_0) with the consistent hyper-Dirichlet pseudo-counts alpha_0 / (K_u K_v) per edge cell and alpha_0 / K_v per node cell,
/// from full-layout counts n (each table summing to N). std::invalid_argument for a size mismatch, N not finite and > 0
/// or alpha_0 not finite and >= 0.
inline void pseudo_count_marginals(const pairwise_graph& graph, const Eigen::VectorXd& counts, double n_records, double alpha0,
                                   Eigen::VectorXd& mu) {
  constexpr const char* f = "pseudo_count_marginals";
  const table_layout layout(graph);
  check_size_match(f, "counts", counts.size(), "table_layout size", layout.size());
  check_positive_finite(f, "N", n_records);
  check_nonnegative_finite(f, "alpha_0", alpha0);
  const double total = n_records + alpha0;
  mu.resize(layout.size());
  for (int v = 0; v < graph.num_nodes(); ++v) {
    const int k = graph.cardinality(v);
    const Eigen::Index o = layout.node_offset(v);
    mu.segment(o, k) = (counts.segment(o, k).array() + alpha0 / k) / total;
  }
  for (int e = 0; e < graph.num_edges(); ++e) {
    const auto [u, v] = graph.edge(e);
    const Eigen::Index cells = static_cast<Eigen::Index>(graph.cardinality(u)) * graph.cardinality(v);
    const Eigen::Index o = layout.edge_offset(e);
    mu.segment(o, cells) = (counts.segment(o, cells).array() + alpha0 / static_cast<double>(cells)) / total;
  }
}

/// Bethe entropy sum_(u,v) H(mu_uv) - sum_v (deg v - 1) H(mu_v) of the marginals mu (0 log 0 = 0); on a forest with
/// consistent marginals it is the entropy of the model (spec Eq. A.1 divided by N).
inline double bethe_entropy(const pairwise_graph& graph, const Eigen::VectorXd& mu) {
  const table_layout layout(graph);
  check_size_match("bethe_entropy", "mu", mu.size(), "table_layout size", layout.size());
  auto h = [&](Eigen::Index begin, Eigen::Index size) {
    double s = 0.0;
    for (Eigen::Index i = begin; i < begin + size; ++i)
      if (mu(i) > 0.0) s -= mu(i) * std::log(mu(i));
    return s;
  };
  double total = 0.0;
  for (int e = 0; e < graph.num_edges(); ++e) {
    const auto [u, v] = graph.edge(e);
    total += h(layout.edge_offset(e), static_cast<Eigen::Index>(graph.cardinality(u)) * graph.cardinality(v));
  }
  for (int v = 0; v < graph.num_nodes(); ++v)
    total -= (static_cast<double>(graph.incident(v).size()) - 1.0) * h(layout.node_offset(v), graph.cardinality(v));
  return total;
}

/// KL(p_theta || p_theta_hat) = <mu(theta), theta - theta_hat> - A(theta) + A(theta_hat), by two calls of an exact
/// back end (a compile-time error for an approximate one). Gauge-invariant. Round-off below zero (>= -1e-12) is
/// returned as 0; a value below -1e-12 means a broken back end and throws std::domain_error.
template <marginal_inference Inference>
double exact_kl(Inference& inference, const Eigen::VectorXd& theta, const Eigen::VectorXd& theta_hat) {
  static_assert(Inference::is_exact, "exact_kl needs an exact marginal-inference back end");
  Eigen::VectorXd mu;
  inference.marginals(theta_hat, mu);
  const double a_hat = inference.log_partition();
  inference.marginals(theta, mu);
  const double kl = mu.dot(theta - theta_hat) - inference.log_partition() + a_hat;
  if (!(kl >= -1e-12)) throw_domain("exact_kl", "KL divergence", kl, "a number >= -1e-12 (an exact back end)");
  return kl < 0.0 ? 0.0 : kl;
}

}  // namespace privpost
