// privpost/families/graphical/loopy_bp.hpp
// loopy_bp: sum-product belief propagation on any pairwise graph (docs/design-cgm.md Sec. 3.4, 3.7), the Bethe
// approximation for graphs with cycles: flooding schedule (every message from the previous sweep), log-domain damping
// log m <- (1 - beta) log m_old + beta log m_new with each new message normalised to log-sum-exp 0; stopped when the
// largest message change is below tol or at max_sweeps (reported as not converged, never thrown). The damped message is
// not renormalised: a message's constant shift cancels in every new message and in the (normalised) beliefs, and by
// Hoelder's inequality its log-sum-exp c obeys c_next <= (1 - beta) c, reaching 0 at the fixed point. Beliefs and the
// Bethe log-partition
//   log Z_B = sum_uv <b_uv, theta_uv> + sum_v <b_v, theta_v> + sum_uv H(b_uv) - sum_v (deg v - 1) H(b_v),
// exact on forests. Messages are kept between calls (a warm start for the E-step's nearby thetas). Allocation-free
// after construction once mu has its size.
// Each call exponentiates the edge potentials once, psi_e = exp(theta_e - max theta_e), so a message costs K_from
// exponentials (of the cavity, shifted by its maximum) and K_to logarithms instead of K_from (K_to + 1) exponentials
// and K_to + 1 logarithms: with sum(x_to) = sum_x psi_e(x, x_to) exp(cavity(x) - max cavity), the normalised message
// is log(sum(x_to) / sum over x_to). A message with an underflowing sum (psi_e spanning more than ~700 nats) is
// computed in the log domain instead.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "privpost/core/errors.hpp"
#include "privpost/families/graphical/brute_force.hpp"
#include "privpost/families/graphical/pairwise_graph.hpp"

namespace privpost {

/// Settings of loopy_bp (the spec's defaults).
struct loopy_bp_options {
  double damping = 0.5;   ///< beta in (0, 1]: the weight of the new message
  double tol = 1e-8;      ///< on the largest |change of a log message| in a sweep
  int max_sweeps = 1000;  ///< flooding sweeps at most
};

/// Approximate (Bethe) marginals and log Z of a pairwise MRF by loopy belief propagation.
class loopy_bp {
 public:
  /// Approximate marginals (graphs with cycles).
  static constexpr bool is_exact = false;

  /// std::invalid_argument for damping outside (0, 1], tol not finite and > 0, or max_sweeps < 1.
  explicit loopy_bp(pairwise_graph graph, loopy_bp_options options = {})
      : graph_(std::move(graph)), layout_(graph_), options_(options) {
    constexpr const char* f = "loopy_bp";
    if (!(options.damping > 0.0 && options.damping <= 1.0)) throw_invalid(f, "damping", options.damping, "a number in (0, 1]");
    check_positive_finite(f, "tol", options.tol);
    if (options.max_sweeps < 1) throw_invalid(f, "max_sweeps", options.max_sweeps, "an integer >= 1");
    // Message slots: for edge e = (u, v), direction 0 is u -> v (K_v entries), direction 1 is v -> u (K_u entries).
    Eigen::Index at = 0;
    for (int e = 0; e < graph_.num_edges(); ++e) {
      const auto [u, v] = graph_.edge(e);
      offset_.push_back({at, at + graph_.cardinality(v)});
      at += graph_.cardinality(v) + graph_.cardinality(u);
    }
    messages_.setZero(at);
    fresh_.setZero(at);
    incoming_.setZero(layout_.edges_begin());
    psi_.setZero(layout_.released_size());
    const int k_max = *std::max_element(graph_.cardinalities().begin(), graph_.cardinalities().end());
    cavity_.setZero(k_max);
    scaled_.setZero(k_max);
    sums_.setZero(k_max);
  }

  /// Node and edge beliefs into mu (table_layout order) for the log-potentials theta (layout().size() finite entries,
  /// std::invalid_argument otherwise); log_partition() then gives the Bethe log Z.
  inference_report marginals(const Eigen::VectorXd& theta, Eigen::VectorXd& mu) {
    detail::check_log_potentials("loopy_bp::marginals", layout_, theta);
    inference_report report;
    report.converged = graph_.num_edges() == 0;
    exponentiate_edges(theta);
    for (int sweep = 0; sweep < options_.max_sweeps && !report.converged; ++sweep) {
      gather(theta);  // incoming_ = theta_v + sum of messages into v (from the previous sweep)
      double change = 0.0;
      for (int e = 0; e < graph_.num_edges(); ++e) {
        const auto [u, v] = graph_.edge(e);
        compute_message(theta, e, u, v, 0);
        compute_message(theta, e, v, u, 1);
      }
      for (Eigen::Index i = 0; i < messages_.size(); ++i) {
        const double updated = (1.0 - options_.damping) * messages_(i) + options_.damping * fresh_(i);
        change = std::max(change, std::abs(updated - messages_(i)));
        messages_(i) = updated;
      }
      report.iterations = sweep + 1;
      report.max_residual = change;
      report.converged = change < options_.tol;
    }
    if (graph_.num_edges() == 0) report.iterations = 1;
    beliefs(theta, mu);
    return report;
  }

  /// The Bethe log Z of the last marginals() call (exact on forests at convergence).
  double log_partition() const noexcept { return log_z_; }
  /// The graph.
  const pairwise_graph& graph() const noexcept { return graph_; }
  /// The layout of the marginal vector.
  const table_layout& layout() const noexcept { return layout_; }
  /// Forget the messages (the next call starts from uniform ones).
  void reset() { messages_.setZero(); }

 private:
  // The message from `from` to `to` along edge e (direction dir) into fresh_: LSE over x_from of theta_from +
  // theta_e + (incoming to `from` less the message from `to`), normalised to LSE 0.
  void compute_message(const Eigen::VectorXd& theta, int e, int from, int to, int dir) {
    const int kf = graph_.cardinality(from), kt = graph_.cardinality(to);
    const Eigen::Index out = dir == 0 ? offset_[static_cast<std::size_t>(e)].first : offset_[static_cast<std::size_t>(e)].second;
    const Eigen::Index back = dir == 0 ? offset_[static_cast<std::size_t>(e)].second : offset_[static_cast<std::size_t>(e)].first;
    const Eigen::Index fo = layout_.node_offset(from), eo = layout_.edge_offset(e), po = eo - layout_.edges_begin();
    const bool from_first = dir == 0;  // edge cells are (x_u, x_v) at x_u K_v + x_v
    double cavity_max = -std::numeric_limits<double>::infinity();
    for (int xf = 0; xf < kf; ++xf) {
      cavity_(xf) = incoming_(fo + xf) - messages_(back + xf);
      cavity_max = std::max(cavity_max, cavity_(xf));
    }
    for (int xf = 0; xf < kf; ++xf) scaled_(xf) = std::exp(cavity_(xf) - cavity_max);
    // Normalised to log-sum-exp 0, the shift (max cavity + max theta_e) cancels: m(x_to) = log(sum(x_to) / total).
    double total = 0.0;
    bool underflow = false;
    for (int xt = 0; xt < kt; ++xt) {
      double sum = 0.0;
      for (int xf = 0; xf < kf; ++xf) sum += scaled_(xf) * psi_(po + (from_first ? xf * kt + xt : xt * kf + xf));
      underflow = underflow || !(sum >= std::numeric_limits<double>::min());
      sums_(xt) = sum;
      total += sum;
    }
    if (!underflow) {
      for (int xt = 0; xt < kt; ++xt) fresh_(out + xt) = std::log(sums_(xt) / total);
      return;
    }
    // Underflow: the log-domain sums for this message.
    for (int xt = 0; xt < kt; ++xt) {
      double top = -std::numeric_limits<double>::infinity();
      for (int xf = 0; xf < kf; ++xf) top = std::max(top, cavity_(xf) + theta(eo + (from_first ? xf * kt + xt : xt * kf + xf)));
      double sum = 0.0;
      for (int xf = 0; xf < kf; ++xf) sum += std::exp(cavity_(xf) + theta(eo + (from_first ? xf * kt + xt : xt * kf + xf)) - top);
      fresh_(out + xt) = top + std::log(sum);
    }
    const double lz = detail::log_sum_exp(fresh_.segment(out, kt));
    fresh_.segment(out, kt).array() -= lz;
  }

  // psi_e = exp(theta_e - max theta_e) for every edge (once per call).
  void exponentiate_edges(const Eigen::VectorXd& theta) {
    const Eigen::Index begin = layout_.edges_begin();
    for (int e = 0; e < graph_.num_edges(); ++e) {
      const auto [u, v] = graph_.edge(e);
      const Eigen::Index cells = static_cast<Eigen::Index>(graph_.cardinality(u)) * graph_.cardinality(v);
      const Eigen::Index eo = layout_.edge_offset(e);
      const double top = theta.segment(eo, cells).maxCoeff();
      psi_.segment(eo - begin, cells) = (theta.segment(eo, cells).array() - top).exp().matrix();
    }
  }

  void gather(const Eigen::VectorXd& theta) {
    incoming_ = theta.head(layout_.edges_begin());
    for (int e = 0; e < graph_.num_edges(); ++e) {
      const auto [u, v] = graph_.edge(e);
      incoming_.segment(layout_.node_offset(v), graph_.cardinality(v)) +=
          messages_.segment(offset_[static_cast<std::size_t>(e)].first, graph_.cardinality(v));
      incoming_.segment(layout_.node_offset(u), graph_.cardinality(u)) +=
          messages_.segment(offset_[static_cast<std::size_t>(e)].second, graph_.cardinality(u));
    }
  }

  // Beliefs from the current messages, and the Bethe log Z.
  void beliefs(const Eigen::VectorXd& theta, Eigen::VectorXd& mu) {
    gather(theta);
    mu.resize(layout_.size());
    double energy = 0.0, entropy = 0.0;
    for (int v = 0; v < graph_.num_nodes(); ++v) {
      const Eigen::Index o = layout_.node_offset(v);
      const int k = graph_.cardinality(v);
      const double lz = detail::log_sum_exp(incoming_.segment(o, k));
      double h = 0.0;
      for (int x = 0; x < k; ++x) {
        const double lb = incoming_(o + x) - lz;
        mu(o + x) = std::exp(lb);
        energy += mu(o + x) * theta(o + x);
        if (mu(o + x) > 0.0) h -= mu(o + x) * lb;
      }
      entropy -= (static_cast<double>(graph_.incident(v).size()) - 1.0) * h;
    }
    for (int e = 0; e < graph_.num_edges(); ++e) {
      const auto [u, v] = graph_.edge(e);
      const int ku = graph_.cardinality(u), kv = graph_.cardinality(v);
      const Eigen::Index eo = layout_.edge_offset(e), uo = layout_.node_offset(u), vo = layout_.node_offset(v);
      const auto [to_v, to_u] = offset_[static_cast<std::size_t>(e)];
      double top = -std::numeric_limits<double>::infinity();
      for (int a = 0; a < ku; ++a)
        for (int c = 0; c < kv; ++c) {
          const double w =
              theta(eo + a * kv + c) + incoming_(uo + a) - messages_(to_u + a) + incoming_(vo + c) - messages_(to_v + c);
          mu(eo + a * kv + c) = w;
          top = std::max(top, w);
        }
      double sum = 0.0;
      for (int a = 0; a < ku; ++a)
        for (int c = 0; c < kv; ++c) sum += std::exp(mu(eo + a * kv + c) - top);
      const double lz = top + std::log(sum);
      for (Eigen::Index i = eo; i < eo + static_cast<Eigen::Index>(ku) * kv; ++i) {
        const double lb = mu(i) - lz;
        mu(i) = std::exp(lb);
        energy += mu(i) * theta(i);
        if (mu(i) > 0.0) entropy -= mu(i) * lb;
      }
    }
    log_z_ = energy + entropy;
  }

  pairwise_graph graph_;
  table_layout layout_;
  loopy_bp_options options_;
  std::vector<std::pair<Eigen::Index, Eigen::Index>> offset_;
  Eigen::VectorXd messages_, fresh_, incoming_;
  Eigen::VectorXd psi_;                     // exp(theta_e - max theta_e), released-cell order
  Eigen::VectorXd cavity_, scaled_, sums_;  // one message's cavity log values, exp(cavity - max), unnormalised sums
  double log_z_ = 0.0;
};

}  // namespace privpost
