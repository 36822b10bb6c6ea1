// privpost/families/graphical/tree_cgm_model.hpp
// tree_cgm_model: the collective graphical model of a tree (forest) MRF as a statistic_model (docs/design-cgm.md Sec. 6, the
// Bayesian variant beyond the dissertation), so that the generic Gibbs-SS samples the posterior of the marginals given
// noisy edge tables:
//   mu ~ hyper_dirichlet(alpha_0);   n | mu ~ N(N mu_E, N Sigma_EE(mu)) (the CLT: Liu et al. 2014's GCGM);
//   y | n, w ~ N(n, diag(w)) (the mechanism's scale mixture; Laplace or Gaussian).
// The statistic is the released edge tables; Sigma_EE is the covariance of one record's stacked one-hot edge indicators,
// Sigma_{(C,i),(D,j)} = P(x_C = i, x_D = j) - mu_C(i) mu_D(j), computed by propagating from every clamped edge cell
// along the tree (O(d^2) for d released cells). It is singular (its range is the tangent space of the consistent
// tables), so the model declares semidefinite_covariance and Gibbs-SS draws n by Matheron's rule, which keeps n
// consistent. Valid set: tree_table_support (n >= 0, consistent), 100 rejection tries, then a counted repair.
//
//   tree_cgm_model model(graph);
//   gibbs_ss chain(model, hyper_dirichlet(graph, 9.0), laplace_mechanism(contingency_l1_sensitivity(graph), eps), y, N, g);
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/math/log_gamma.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/families/graphical/hyper_dirichlet.hpp"
#include "privpost/families/graphical/pairwise_graph.hpp"

namespace privpost {

/// The valid set of the edge tables of n records of a forest: every count >= 0, every table summing to n and the tables
/// consistent (every edge at a node gives that node the same counts), within tolerance() = 1e-6 max(n, 1) for the
/// rounding of continuous draws. project() repairs any vector in breadth-first order (docs/design-cgm.md Sec. 6, step 3): each
/// root edge table clipped at 0 and rescaled to n (uniform if nothing is left), then every row (x_u = a) of an edge directed away
/// from the root clipped at 0 and rescaled to the parent's repaired count of a (uniform over the row if nothing is left: the
/// support does not know the parameter, so this departs from the spec's P(. | a)). The result is consistent and non-negative.
/// contains() and project() allocate nothing.
class tree_table_support {
 public:
  /// Tries of rejection sampling before projecting.
  static constexpr int rejection_tries = 100;

  /// The support of the edge tables of the forest that tables describe.
  explicit tree_table_support(std::shared_ptr<const detail::forest_tables> tables)
      : tables_(std::move(tables)), node_counts_(Eigen::VectorXd::Zero(tables_->layout.edges_begin())) {}

  /// Tolerance of the consistency checks for n records.
  static double tolerance(double n) noexcept { return 1e-6 * std::max(n, 1.0); }

  /// Whether s is in the valid set of the class comment, within tolerance(n).
  bool contains(const Eigen::VectorXd& s, double n) const {
    const auto& t = *tables_;
    if (s.size() != t.released()) return false;
    const double tol = tolerance(n);
    for (Eigen::Index i = 0; i < s.size(); ++i)
      if (!(s(i) >= 0.0) || !std::isfinite(s(i))) return false;
    for (int e = 0; e < t.graph.num_edges(); ++e) {
      const auto [u, v] = t.graph.edge(e);
      const Eigen::Index cells = static_cast<Eigen::Index>(t.graph.cardinality(u)) * t.graph.cardinality(v);
      if (std::abs(s.segment(t.released_index(t.layout.edge_offset(e)), cells).sum() - n) > tol) return false;
    }
    // Each node's counts as its parent edge gives them (a root's: its root edge); then the parent side of every edge
    // must agree with its parent's counts. That covers every pair of edges at every node.
    for (std::size_t i = 0; i < t.edges.size(); ++i) {
      const oriented_edge& oe = t.edges[i];
      for (int c = 0; c < oe.k_child; ++c) node_counts_(t.layout.node_offset(oe.child) + c) = t.child_margin(s, oe, c);
      if (t.root_edge[i])
        for (int a = 0; a < oe.k_parent; ++a) node_counts_(t.layout.node_offset(oe.parent) + a) = t.parent_margin(s, oe, a);
    }
    for (const oriented_edge& oe : t.edges)
      for (int a = 0; a < oe.k_parent; ++a)
        if (std::abs(t.parent_margin(s, oe, a) - node_counts_(t.layout.node_offset(oe.parent) + a)) > tol) return false;
    return true;
  }

  /// Repairs s as the class comment says; false when s was already valid.
  bool project(Eigen::VectorXd& s, double n, numerical_events& /*events*/) const {
    if (contains(s, n)) return false;
    const auto& t = *tables_;
    check_size_match("tree_table_support::project", "edge tables s", s.size(), "released cells", t.released());
    const double total = std::max(n, 0.0);
    for (std::size_t i = 0; i < t.edges.size(); ++i) {
      const oriented_edge& oe = t.edges[i];
      const Eigen::Index u_at = t.layout.node_offset(oe.parent), v_at = t.layout.node_offset(oe.child);
      if (t.root_edge[i]) {
        double sum = 0.0;
        for (int a = 0; a < oe.k_parent; ++a)
          for (int c = 0; c < oe.k_child; ++c) sum += clip(s(t.released_index(oe.cell(a, c))));
        const double cells = static_cast<double>(oe.k_parent) * oe.k_child;
        for (int a = 0; a < oe.k_parent; ++a)
          for (int c = 0; c < oe.k_child; ++c) {
            double& x = s(t.released_index(oe.cell(a, c)));
            x = sum > 0.0 ? clip(x) * total / sum : total / cells;
          }
        for (int a = 0; a < oe.k_parent; ++a) node_counts_(u_at + a) = t.parent_margin(s, oe, a);
      } else {
        for (int a = 0; a < oe.k_parent; ++a) {
          const double parent = node_counts_(u_at + a);
          double sum = 0.0;
          for (int c = 0; c < oe.k_child; ++c) sum += clip(s(t.released_index(oe.cell(a, c))));
          for (int c = 0; c < oe.k_child; ++c) {
            double& x = s(t.released_index(oe.cell(a, c)));
            x = sum > 0.0 ? clip(x) * parent / sum : parent / oe.k_child;
          }
        }
      }
      for (int c = 0; c < oe.k_child; ++c) node_counts_(v_at + c) = t.child_margin(s, oe, c);
    }
    return true;
  }

 private:
  // Negative and non-finite entries count as 0 (a NaN never reaches the repaired tables).
  static double clip(double x) noexcept { return x > 0.0 && std::isfinite(x) ? x : 0.0; }

  std::shared_ptr<const detail::forest_tables> tables_;
  mutable Eigen::VectorXd node_counts_;  // scratch: each node's counts as fixed by its parent (or root) edge
};

/// The tree CGM as a statistic_model (see the file comment). Parameter: the node and edge marginals mu (table_layout
/// order; a hyper_dirichlet draw). Statistic: the released edge tables. Construction throws std::invalid_argument for a
/// graph with a cycle or a node in no edge. moments() allocates nothing after the first call; a model keeps scratch
/// storage, so one object serves one chain at a time (samplers own their copy).
class tree_cgm_model {
 public:
  /// The node and edge marginals mu, in table_layout order.
  using parameter_type = Eigen::VectorXd;
  /// Type of the released edge tables.
  using vector_type = Eigen::VectorXd;
  /// Type of their covariance.
  using matrix_type = Eigen::MatrixXd;
  /// The statistic's length is known at run time only.
  static constexpr int static_size = Eigen::Dynamic;
  /// N Sigma_EE is singular: Gibbs-SS draws the tables by Matheron's rule (semidefinite_statistic_model).
  static constexpr bool semidefinite_covariance = true;

  /// The model of graph's released edge tables; std::invalid_argument for a graph with a cycle or a node in no edge.
  explicit tree_cgm_model(pairwise_graph graph)
      : tables_(std::make_shared<const detail::forest_tables>(std::move(graph), "tree_cgm_model")), support_(tables_) {
    build_propagation_orders();
    build_footprints();
    several_trees_ = std::count(tables_->root_edge.begin(), tables_->root_edge.end(), 1) > 1;
    node_dist_.setZero(tables_->layout.edges_begin());
    step_.setZero(tables_->k_max);
    terms_.assign(tables_->edges.size(), 0.0);
    candidate_terms_.assign(tables_->edges.size(), 0.0);
    row_.setZero(tables_->k_max);
    kept_.setZero(tables_->k_max);
  }

  /// The graph.
  const pairwise_graph& graph() const noexcept { return tables_->graph; }
  /// The layout of the parameter (marginal) vector.
  const table_layout& layout() const noexcept { return tables_->layout; }
  /// Released cells d (the edge tables).
  Eigen::Index size() const noexcept { return tables_->released(); }
  /// The valid set of the edge tables.
  const tree_table_support& support() const noexcept { return support_; }
  /// The parameter as posteriors store it: all marginals, table_layout order.
  Eigen::VectorXd parameter_vector(const Eigen::VectorXd& mu) const { return mu; }

  /// mean = N mu_E and cov = N Sigma_EE(mu) for marginals mu (table_layout order, consistent, as a hyper_dirichlet draw
  /// gives). std::invalid_argument for mu of the wrong size or with a negative or non-finite entry.
  void moments(const Eigen::VectorXd& mu, double n, Eigen::VectorXd& mean, Eigen::MatrixXd& cov) const {
    constexpr const char* f = "tree_cgm_model::moments";
    const auto& t = *tables_;
    check_marginals(f, mu);
    const Eigen::Index d = size(), begin = t.layout.edges_begin();
    mean = n * mu.tail(d);
    if (cov.rows() != d || cov.cols() != d) cov.resize(d, d);
    // A record's trees are independent: the propagation below never reaches another tree's cells, whose covariance
    // with the clamped cell is 0.
    if (several_trees_) cov.setZero();
    for (int e = 0; e < t.graph.num_edges(); ++e) {
      const auto [c1, c2] = t.graph.edge(e);
      const int k1 = t.graph.cardinality(c1), k2 = t.graph.cardinality(c2);
      const Eigen::Index at = t.layout.edge_offset(e);
      for (int i1 = 0; i1 < k1; ++i1)
        for (int i2 = 0; i2 < k2; ++i2) {
          const Eigen::Index row = at + static_cast<Eigen::Index>(i1) * k2 + i2 - begin;
          const double w = mu(row + begin);
          // The record's own edge: P(x_C = i, x_C = j) = w [i = j].
          for (Eigen::Index j = 0; j < static_cast<Eigen::Index>(k1) * k2; ++j)
            cov(row, at - begin + j) = w * ((at - begin + j == row ? 1.0 : 0.0) - mu(at + j));
          // Every other edge by propagation from the clamped cell: p_v = P(x_v = . | x_C = i).
          const auto& order = orders_[static_cast<std::size_t>(e)];
          if (w <= 0.0) {
            for (const oriented_edge& oe : order)
              for (int a = 0; a < oe.k_parent; ++a)
                for (int c = 0; c < oe.k_child; ++c) cov(row, oe.cell(a, c) - begin) = 0.0;
            continue;
          }
          node_dist_.segment(t.layout.node_offset(c1), k1).setZero();
          node_dist_(t.layout.node_offset(c1) + i1) = 1.0;
          node_dist_.segment(t.layout.node_offset(c2), k2).setZero();
          node_dist_(t.layout.node_offset(c2) + i2) = 1.0;
          for (const oriented_edge& oe : order) {
            const Eigen::Index u_at = t.layout.node_offset(oe.parent), v_at = t.layout.node_offset(oe.child);
            node_dist_.segment(v_at, oe.k_child).setZero();
            for (int a = 0; a < oe.k_parent; ++a) {
              const double pu = mu(u_at + a);
              // P(x_v = c | x_u = a) = mu_uv(a, c) / mu_u(a); a state of probability 0 has weight 0 here.
              const double q = pu > 0.0 ? node_dist_(u_at + a) / pu : 0.0;
              for (int c = 0; c < oe.k_child; ++c) {
                const double joint = q * mu(oe.cell(a, c));
                node_dist_(v_at + c) += joint;
                cov(row, oe.cell(a, c) - begin) = w * (joint - mu(oe.cell(a, c)));
              }
            }
          }
        }
    }
    // Symmetrise (the two propagation directions round differently) and scale by N.
    for (Eigen::Index j = 0; j < d; ++j)
      for (Eigen::Index i = j; i < d; ++i) cov(i, j) = cov(j, i) = 0.5 * n * (cov(i, j) + cov(j, i));
  }

  /// One draw x ~ N(n m(mu), n Sigma(mu)), the law moments() describes, in O(d) and without factorising the (singular)
  /// covariance: down each tree from its root, the root's counts n mu_r + sqrt(n) (D^1/2 e - mu_r 1^T D^1/2 e)
  /// (D = diag mu_r), then every row a of an edge u -> v directed away from the root, with P = P(x_v = . | x_u = a),
  ///   x_uv(a, .) = x_u(a) P + sqrt(n mu_u(a)) (diag(P)^1/2 e - P 1^T diag(P)^1/2 e),
  /// and x_v the column sums. The sum of n records' indicators has exactly this mean and covariance: given the parent's
  /// states a row is multinomial(n_u(a), P), its mean linear in n_u(a) and its covariance's mean n mu_u(a) (diag P - P
  /// P^T) (the law of total covariance, down the tree), and rows are independent given the parents. The draw lies in
  /// the constraints' affine set (tables consistent, each summing to n). Allocates nothing after the first call.
  /// std::invalid_argument for mu of the wrong size or with an entry that is not a probability.
  template <random_engine G>
  void draw_normal_statistic(const Eigen::VectorXd& mu, double n, G& g, Eigen::VectorXd& x) const {
    constexpr const char* f = "tree_cgm_model::draw_normal_statistic";
    const auto& t = *tables_;
    check_marginals(f, mu);
    if (!(n >= 0.0 && std::isfinite(n))) throw_invalid(f, "records n", n, "a finite number >= 0");
    if (x.size() != size()) x.resize(size());
    const double root_n = std::sqrt(n);
    for (std::size_t i = 0; i < t.edges.size(); ++i) {
      const oriented_edge& oe = t.edges[i];
      const Eigen::Index u_at = t.layout.node_offset(oe.parent), v_at = t.layout.node_offset(oe.child);
      if (t.root_edge[i]) {  // node_dist_ holds each node's drawn counts
        double sum = 0.0;
        for (int a = 0; a < oe.k_parent; ++a) sum += node_dist_(u_at + a) = std::sqrt(mu(u_at + a)) * draw_normal(g);
        for (int a = 0; a < oe.k_parent; ++a)
          node_dist_(u_at + a) = n * mu(u_at + a) + root_n * (node_dist_(u_at + a) - mu(u_at + a) * sum);
      }
      for (int a = 0; a < oe.k_parent; ++a) {
        const double pu = mu(u_at + a), count = node_dist_(u_at + a);
        // A state of probability 0 has counts 0 (its row's law has variance 0): its cells are 0.
        const double scale = std::sqrt(n * pu);
        double sum = 0.0;
        for (int c = 0; c < oe.k_child; ++c) {
          const double p = step_(c) = pu > 0.0 ? mu(oe.cell(a, c)) / pu : 0.0;
          sum += x(t.released_index(oe.cell(a, c))) = std::sqrt(p) * draw_normal(g);
        }
        for (int c = 0; c < oe.k_child; ++c) {
          double& cell = x(t.released_index(oe.cell(a, c)));
          cell = count * step_(c) + scale * (cell - step_(c) * sum);
        }
      }
      for (int c = 0; c < oe.k_child; ++c) node_dist_(v_at + c) = t.child_margin(x, oe, c);
    }
  }

  /// Shift moves (gibbs_ss::set_shift_moves): one pass of random-walk Metropolis-Hastings over the prior's blocks (the
  /// root marginals and the conditional rows P(x_v = . | x_u = a)), each proposal moving the marginals mu to mu' and the
  /// edge tables with them, s' = s + n (mu'_E - mu_E), so that the tables' departure from their mean, s - n mu_E, stays
  /// as it is. Where the noise dominates, mu | s is far narrower than mu's posterior (the tables pin mu) and Gibbs-SS
  /// moves mu and s together by small steps; this move takes them together by steps of the posterior's own width.
  /// The target is the joint density of (mu, s) given the release z with the noise's latent variances integrated out:
  ///   prod_blocks Dir(row; alpha) * CGM(s | mu) * p(z | s)   (p: the mechanism's log_likelihood),
  /// CGM(s | mu) = n! prod_v prod_i s_v(i)!^(deg v - 1) / prod_uv prod_ij s_uv(ij)! * prod_rows prod_c row_c^(s_uc)
  /// (the exact law of a tree's tables, Sheldon & Dietterich 2011, with continuous counts: the likelihood whose
  /// conjugate update is hyper_dirichlet::posterior, so this move and mu | s leave the same joint invariant). The map
  /// (mu, s) -> (mu', s') is a translation of s given the rows (volume-preserving), and a row's step is a symmetric
  /// normal on the simplex's tangent plane with sd lambda sqrt(K^-1 (1 - K^-1) / m + v / m^2): m = n mu_u(a) the row's
  /// records, v the noise variance of its counts (the mechanism's noise_variance(), times K_v for a root marginal),
  /// lambda = shift_step; m is unchanged by the row's own move and v by any, so the proposal is symmetric and the
  /// ratio is the target's. The sd uses no latent variance: the target does not condition on them, and a sampler
  /// redraws them after the move (Gibbs-SS's w | s, z). A proposal leaving the simplex or making a count negative is
  /// refused. A state with a node state of probability 0 (a row undetermined by mu) is left as it is. Returns the
  /// proposals made and accepted. mu consistent with every entry > 0 (a hyper_dirichlet draw), s on the valid set, z of
  /// size() entries. Allocates nothing after the first call. For a mechanism whose noise is exactly its scale mixture
  /// (exact_scale_mixture_noise: Laplace, Gaussian). A lattice mechanism's log_likelihood is its pmf at the lattice
  /// point of s, not the continuous view that Gibbs-SS's s | theta uses, so the two steps would target slightly
  /// different laws; privpost-infer runs the move for Laplace and Gaussian releases only.
  template <scale_mixture_noise Mechanism, random_engine G>
  requires requires(const Mechanism& m) {
    { m.noise_variance() } -> std::convertible_to<double>;
  }
  move_tally shift_move(const hyper_dirichlet& prior, Eigen::VectorXd& mu, Eigen::VectorXd& s, const Eigen::VectorXd& z,
                        const Mechanism& mechanism, double n, G& g) const {
    constexpr const char* f = "tree_cgm_model::shift_move";
    check_prior(prior);
    const auto& t = *tables_;
    check_size_match(f, "marginals mu", mu.size(), "table_layout size", t.layout.size());
    check_size_match(f, "edge tables s", s.size(), "released cells", size());
    check_size_match(f, "release z", z.size(), "released cells", size());
    for (Eigen::Index i = 0; i < t.layout.edges_begin(); ++i)
      if (!(mu(i) > 0.0)) return {};  // an undetermined row: left to the other blocks of the sweep
    const Eigen::VectorXd& alpha = prior.pseudo_counts();
    const double noise_variance = mechanism.noise_variance();
    // The logarithms of the blocks' entries (a root's marginal at its node cells, a row at its edge cells): a proposal
    // changes one block's, so the terms of the tables below it reuse the others' instead of taking K logarithms a row.
    if (log_rows_.size() != mu.size()) log_rows_.resize(mu.size());
    for (std::size_t i = 0; i < t.edges.size(); ++i) {
      const oriented_edge& oe = t.edges[i];
      const Eigen::Index u_at = t.layout.node_offset(oe.parent);
      for (int a = 0; a < oe.k_parent; ++a) {
        if (t.root_edge[i]) log_rows_(u_at + a) = std::log(mu(u_at + a));
        for (int c = 0; c < oe.k_child; ++c) log_rows_(oe.cell(a, c)) = std::log(mu(oe.cell(a, c)) / mu(u_at + a));
      }
    }
    for (std::size_t i = 0; i < t.edges.size(); ++i) terms_[i] = shift_edge_terms(alpha, s, z, mechanism, i);
    move_tally tally;
    for (std::size_t i = 0; i < t.edges.size(); ++i) {
      const oriented_edge& oe = t.edges[i];
      const Eigen::Index u_at = t.layout.node_offset(oe.parent);
      for (int a = t.root_edge[i] ? -1 : 0; a < oe.k_parent; ++a) {
        // The block's row, its records m and its counts' mean noise variance v.
        const int k = a < 0 ? oe.k_parent : oe.k_child;
        const double m = a < 0 ? n : n * mu(u_at + a);
        const double v = a < 0 ? oe.k_child * noise_variance : noise_variance;
        const double kk = 1.0 / k;
        const double sd = std::min(1.0, shift_step * std::sqrt(kk * (1.0 - kk) / m + v / (m * m)));
        ++tally.proposed;
        double mean_step = 0.0;
        for (int c = 0; c < k; ++c) {
          step_(c) = draw_normal(g);
          mean_step += step_(c) / k;
        }
        bool inside = true;
        for (int c = 0; c < k; ++c) {
          const double old = a < 0 ? mu(u_at + c) : mu(oe.cell(a, c)) / mu(u_at + a);
          row_(c) = old + sd * (step_(c) - mean_step);
          inside = inside && row_(c) > 0.0;
        }
        if (!inside) continue;
        rebuild_marginals(mu, i, a, mu_new_);
        s_new_ = s + n * (mu_new_.tail(size()) - mu.tail(size()));
        if (!(s_new_.minCoeff() >= 0.0)) continue;
        // The candidate's block logarithms in place (the current ones kept to restore on a refusal).
        for (int c = 0; c < k; ++c) {
          const Eigen::Index at = a < 0 ? u_at + c : oe.cell(a, c);
          kept_(c) = log_rows_(at);
          log_rows_(at) = std::log(row_(c));
        }
        // Only the terms of the tables at and below the block change (the whole component's for a root marginal). A
        // current value of -infinity takes any possible candidate; a NaN ratio (both impossible) is refused.
        const auto& changed = a < 0 ? component_[i] : below_[i];
        double ratio = 0.0;
        for (const std::size_t j : changed) {
          candidate_terms_[j] = shift_edge_terms(alpha, s_new_, z, mechanism, j);
          ratio += candidate_terms_[j] - terms_[j];
        }
        if (std::log(draw_uniform(g)) < ratio) {
          mu.swap(mu_new_);
          s.swap(s_new_);
          for (const std::size_t j : changed) terms_[j] = candidate_terms_[j];
          ++tally.accepted;
        } else {
          for (int c = 0; c < k; ++c) log_rows_(a < 0 ? u_at + c : oe.cell(a, c)) = kept_(c);
        }
      }
    }
    return tally;
  }

  /// The multiplier lambda of the shift move's step (see shift_move).
  static constexpr double shift_step = 0.8;

  /// Conjugate-Update: the hyper-Dirichlet posterior given edge tables s (on the valid set: non-negative).
  hyper_dirichlet update(const hyper_dirichlet& prior, const Eigen::VectorXd& s, double /*n*/) const {
    check_prior(prior);
    return prior.posterior(s);
  }
  /// The same, written into out (reusing its storage; Gibbs-SS's allocation-free path).
  void update(const hyper_dirichlet& prior, const Eigen::VectorXd& s, double /*n*/, hyper_dirichlet& out) const {
    check_prior(prior);
    prior.posterior(s, out);
  }

 private:
  // The prior must describe the model's graph: a prior of another graph with as many cells would be read in the wrong
  // layout. Shared tables make the usual check a pointer comparison.
  void check_prior(const hyper_dirichlet& prior) const {
    if (prior.tables_ != tables_ && !(prior.graph() == graph()))
      throw_invalid("tree_cgm_model::update", "prior's number of edges", prior.graph().num_edges(),
                    "a hyper_dirichlet of the model's own graph (same nodes, cardinalities and edges)");
  }

  // mu rebuilt from the root down into out with block (edge entry i, parent state a; a = -1 the root marginal) set to
  // row_ and every other block read off mu (every node probability of mu is > 0: shift_move checks it).
  void rebuild_marginals(const Eigen::VectorXd& mu, std::size_t i_new, int a_new, Eigen::VectorXd& out) const {
    const auto& t = *tables_;
    if (out.size() != mu.size()) out.resize(mu.size());
    out.head(t.layout.edges_begin()).setZero();
    for (std::size_t i = 0; i < t.edges.size(); ++i) {
      const oriented_edge& oe = t.edges[i];
      const Eigen::Index u_at = t.layout.node_offset(oe.parent), v_at = t.layout.node_offset(oe.child);
      if (t.root_edge[i]) {
        if (i == i_new && a_new < 0) {
          out.segment(u_at, oe.k_parent) = row_.head(oe.k_parent);
        } else {
          out.segment(u_at, oe.k_parent) = mu.segment(u_at, oe.k_parent);
        }
      }
      for (int a = 0; a < oe.k_parent; ++a) {
        const double pa = out(u_at + a);
        for (int c = 0; c < oe.k_child; ++c) {
          const double row = i == i_new && a == a_new ? row_(c) : mu(oe.cell(a, c)) / mu(u_at + a);
          out(oe.cell(a, c)) = pa * row;
          out(v_at + c) += pa * row;
        }
      }
    }
  }

  // The terms of log shift_move's target at (mu, s) that edge entry i carries, mu's block logarithms read from log_rows_: its
  // rows' prior and CGM likelihood, prod of row_c^(s_c + alpha_c - 1) (with the root marginal for a root edge); the CGM's base
  // measure of its table and child node (and of the root for a root edge); the mechanism's log-likelihood of its cells (an edge
  // table is one contiguous segment of the release). The target is their sum over the entries. -infinity for a row entry of 0
  // that carries weight.
  template <class Mechanism>
  double shift_edge_terms(const Eigen::VectorXd& alpha, const Eigen::VectorXd& s, const Eigen::VectorXd& z,
                          const Mechanism& mechanism, std::size_t i) const {
    const auto& t = *tables_;
    double value = 0.0;
    auto add = [&value](double weight, double log_p) {
      if (weight != 0.0) value += weight * log_p;
    };
    // (deg - 1) log s_v(i)! of a node's table (nothing for a leaf).
    auto node = [&](int v, double count) {
      const double repeats = static_cast<double>(t.graph.incident(v).size()) - 1.0;
      if (repeats > 0.0) value += repeats * log_gamma(count + 1.0);
    };
    const oriented_edge& oe = t.edges[i];
    const Eigen::Index u_at = t.layout.node_offset(oe.parent);
    if (t.root_edge[i]) {
      for (int a = 0; a < oe.k_parent; ++a) {
        const double count = t.parent_margin(s, oe, a);
        add(count + t.parent_margin(alpha, oe, a) - 1.0, log_rows_(u_at + a));
        node(oe.parent, count);
      }
    }
    for (int c = 0; c < oe.k_child; ++c) node(oe.child, t.child_margin(s, oe, c));
    for (int a = 0; a < oe.k_parent; ++a)
      for (int c = 0; c < oe.k_child; ++c) {
        const Eigen::Index j = t.released_index(oe.cell(a, c));
        add(s(j) + alpha(j) - 1.0, log_rows_(oe.cell(a, c)));
        value -= log_gamma(s(j) + 1.0);
      }
    const Eigen::Index at = t.released_index(oe.offset), cells = static_cast<Eigen::Index>(oe.k_parent) * oe.k_child;
    value += mechanism.log_likelihood(z.segment(at, cells), s.segment(at, cells));
    return std::isfinite(value) ? value : -std::numeric_limits<double>::infinity();
  }

  // shift_move's footprints: for every edge entry (t.edges order) itself and the entries below its child (a row's
  // move changes those tables), and for a root edge every entry of its component (the root marginal's).
  void build_footprints() {
    const auto& t = *tables_;
    const std::size_t m = t.edges.size();
    below_.assign(m, {});
    component_.assign(m, {});
    std::vector<char> inside(static_cast<std::size_t>(t.graph.num_nodes()));
    auto collect = [&](std::size_t from, int node, std::vector<std::size_t>& out) {
      std::fill(inside.begin(), inside.end(), 0);
      inside[static_cast<std::size_t>(node)] = 1;
      for (std::size_t j = from; j < m; ++j)  // breadth-first order: a parent's entry comes before its children's
        if (inside[static_cast<std::size_t>(t.edges[j].parent)]) {
          inside[static_cast<std::size_t>(t.edges[j].child)] = 1;
          out.push_back(j);
        }
    };
    for (std::size_t i = 0; i < m; ++i) {
      below_[i].push_back(i);
      collect(i + 1, t.edges[i].child, below_[i]);
      if (t.root_edge[i]) collect(i, t.edges[i].parent, component_[i]);
    }
  }

  // For every edge C: the other edges directed away from C (breadth-first from both its ends), parent = the end nearer C.
  void build_propagation_orders() {
    const auto& t = *tables_;
    const int nodes = t.graph.num_nodes();
    orders_.resize(static_cast<std::size_t>(t.graph.num_edges()));
    std::vector<char> seen(static_cast<std::size_t>(nodes));
    std::vector<int> queue;
    for (int e = 0; e < t.graph.num_edges(); ++e) {
      std::fill(seen.begin(), seen.end(), 0);
      queue.clear();
      const auto [c1, c2] = t.graph.edge(e);
      for (const int c : {c1, c2}) {
        seen[static_cast<std::size_t>(c)] = 1;
        queue.push_back(c);
      }
      auto& order = orders_[static_cast<std::size_t>(e)];
      for (std::size_t head = 0; head < queue.size(); ++head) {
        const int u = queue[head];
        for (const incidence& inc : t.graph.incident(u)) {
          if (inc.edge == e || seen[static_cast<std::size_t>(inc.neighbour)]) continue;
          seen[static_cast<std::size_t>(inc.neighbour)] = 1;
          queue.push_back(inc.neighbour);
          const int v = inc.neighbour;
          order.push_back({u, v, inc.edge, t.graph.cardinality(u), t.graph.cardinality(v), t.layout.edge_offset(inc.edge),
                           t.graph.edge(inc.edge).first == u});
        }
      }
    }
  }

  // moments()' and draw_normal_statistic's check of the marginals: of the layout's size, every entry a probability.
  void check_marginals(const char* f, const Eigen::VectorXd& mu) const {
    check_size_match(f, "marginals mu", mu.size(), "table_layout size", tables_->layout.size());
    for (Eigen::Index i = 0; i < mu.size(); ++i)
      if (!(mu(i) >= 0.0 && std::isfinite(mu(i)))) throw_invalid(f, "marginal mu_" + std::to_string(i), mu(i), "a probability");
  }

  std::shared_ptr<const detail::forest_tables> tables_;
  tree_table_support support_;
  std::vector<std::vector<oriented_edge>> orders_;
  bool several_trees_ = false;         // a forest of more than one tree (moments() then zeroes the cross-tree covariance)
  mutable Eigen::VectorXd node_dist_;  // moments()' and draw_normal_statistic's scratch
  std::vector<std::vector<std::size_t>> below_, component_;  // shift_move's footprints (build_footprints)
  // shift_move's scratch: a block's step and proposed row, the proposed marginals and tables (step_ is also
  // draw_normal_statistic's row P(x_v = . | x_u = a)).
  mutable Eigen::VectorXd step_, row_, kept_, mu_new_, s_new_;
  mutable Eigen::VectorXd log_rows_;                     // log of every block's entries at the current state (shift_move)
  mutable std::vector<double> terms_, candidate_terms_;  // per edge entry: the target's terms now and proposed
};

}  // namespace privpost
