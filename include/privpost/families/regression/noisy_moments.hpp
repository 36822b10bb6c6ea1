// privpost/families/regression/noisy_moments.hpp
// moment_release_layout and moments_from_release: Gibbs-SS-Noisy's covariate moments (001 Sec. 3.4.4). The data owner
// releases the normalised fourth sample moments (1/n) sum x~_a x~_b x~_c x~_d (unique index sets; the all-intercept
// entry c^4 is public) with their own share of the budget; the analyst rebuilds the moment tensor from the release, and
// repairs it if the noise made it a set of moments no distribution has (valid_covariate_moments).
#pragma once

#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "privpost/core/errors.hpp"
#include "privpost/core/interval.hpp"
#include "privpost/families/regression/covariate_moments.hpp"
#include "privpost/families/regression/regression_layout.hpp"

namespace privpost {

namespace detail {

// The moment matrix of the monomials of degree <= 2 of a design row, built from m2 and m4: with an intercept the
// monomials x~_a x~_b (a <= b; they include the constant c^2 and c x_k), without one 1 and x_a x_b. A distribution's
// moments make it positive semidefinite; an indefinite one makes Sigma(theta) of 001 Eqs. 2-3 indefinite for some theta.
inline Eigen::MatrixXd monomial_moment_matrix(const covariate_moments& cm, bool intercept) {
  std::vector<std::pair<int, int>> pairs;
  for (int a = 0; a < cm.p; ++a)
    for (int b = a; b < cm.p; ++b) pairs.emplace_back(a, b);
  const int shift = intercept ? 0 : 1;
  const auto size = static_cast<Eigen::Index>(pairs.size()) + shift;
  Eigen::MatrixXd g(size, size);
  if (!intercept) {
    g(0, 0) = 1.0;
    for (std::size_t i = 0; i < pairs.size(); ++i)
      g(0, static_cast<Eigen::Index>(i) + 1) = g(static_cast<Eigen::Index>(i) + 1, 0) = cm.m2(pairs[i].first, pairs[i].second);
  }
  for (std::size_t i = 0; i < pairs.size(); ++i)
    for (std::size_t j = 0; j < pairs.size(); ++j)
      g(static_cast<Eigen::Index>(i) + shift, static_cast<Eigen::Index>(j) + shift) =
          cm.fourth(pairs[i].first, pairs[i].second, pairs[j].first, pairs[j].second);
  return g;
}

// The smallest eigenvalue of a monomial moment matrix g and (without an intercept, where the covariates' linear forms
// are not among the monomials) of m2. By Eigen's SelfAdjointEigenSolver, which stays fast for the large moment matrices
// of many covariates (symmetric_eigen does not), and which is the slowest part of Eigen to compile: these functions
// are templates (their parameter never deduced) only so that a translation unit that never calls them does not
// compile it.
template <class Unused = void>
double smallest_moment_eigenvalue(const Eigen::MatrixXd& g, const Eigen::MatrixXd& m2, bool intercept) {
  double low = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(g, Eigen::EigenvaluesOnly).eigenvalues()(0);
  if (!intercept)
    low = std::min(low, Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(m2, Eigen::EigenvaluesOnly).eigenvalues()(0));
  return low;
}

// The same for a set of moments.
template <class Unused = void>
double smallest_moment_eigenvalue(const covariate_moments& cm, bool intercept) {
  return smallest_moment_eigenvalue(monomial_moment_matrix(cm, intercept), cm.m2, intercept);
}

// (1 - lambda) a + lambda b, entry by entry.
inline covariate_moments mix_moments(const covariate_moments& a, const covariate_moments& b, double lambda) {
  covariate_moments out = a;
  out.m2 = (1.0 - lambda) * a.m2 + lambda * b.m2;
  for (std::size_t i = 0; i < out.m4.size(); ++i) out.m4[i] = (1.0 - lambda) * a.m4[i] + lambda * b.m4[i];
  return out;
}

}  // namespace detail

/// Makes a set of covariate moments valid: the moment matrix of the degree-<= 2 monomials of a design row (and m2)
/// positive semidefinite, which a distribution's moments always are and which makes Sigma(theta) of 001 Eqs. 2-3 a
/// covariance for every theta. Noise on released fourth moments usually breaks it (998 of 1000 releases of
/// tests/tools/regression.csv's moments, n = 300, two covariates, epsilon 2.5 for the moments; eigenvalues near -0.1);
/// Gibbs-SS on such moments draws s from an indefinite "covariance" and can diverge (|s| ~ 1e16, then the NIG update
/// fails: about 1 chain in 300 there). Moments that are valid already (smallest eigenvalue at
/// least -1e-10 times the largest) are left unchanged and 0 is returned. Otherwise they are replaced by the mixture
/// (1 - lambda) cm + lambda ref, where ref are the moments of a normal with cm's means (m2's intercept row / c; 0
/// without an intercept) and variances (m2's diagonal minus the squared means, floored at a tenth of the diagonal and at
/// 1e-12), and lambda in (0, 1] is the smallest weight (bisection, 60 halvings) whose mixture's smallest eigenvalue is
/// at least 1e-3 of ref's; lambda is returned. Valid moment sets form a convex set, so the mixture is valid, and a
/// mixture with a distribution is again a distribution's moments. It is post-processing of the release: it costs no
/// privacy. m2 and m4 must hold p = layout.columns() rows and p^4 entries (std::invalid_argument otherwise) and be
/// finite (std::invalid_argument naming the entry otherwise).
// A template (its parameter never deduced) only so that a translation unit that never calls it does not compile Eigen's
// eigensolver (see detail::smallest_moment_eigenvalue).
template <class Unused = void>
double valid_covariate_moments(const regression_layout& layout, covariate_moments& cm) {
  const int p = layout.columns();
  check_size_match("valid_covariate_moments", "moments p", cm.p, "design columns", p);
  check_size_match("valid_covariate_moments", "m2 rows", cm.m2.rows(), "design columns", p);
  check_size_match("valid_covariate_moments", "m2 cols", cm.m2.cols(), "design columns", p);
  check_size_match("valid_covariate_moments", "m4 entries", static_cast<Eigen::Index>(cm.m4.size()), "p^4",
                   static_cast<Eigen::Index>(p) * p * p * p);
  for (Eigen::Index i = 0; i < cm.m2.size(); ++i) check_finite("valid_covariate_moments", "m2 entry", cm.m2.data()[i]);
  for (double v : cm.m4) check_finite("valid_covariate_moments", "m4 entry", v);
  const bool intercept = layout.intercept();
  const Eigen::MatrixXd g = detail::monomial_moment_matrix(cm, intercept);
  const Eigen::VectorXd eig = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(g, Eigen::EigenvaluesOnly).eigenvalues();
  const double scale = std::max(std::abs(eig(0)), std::abs(eig(eig.size() - 1)));
  double low = eig(0);
  if (!intercept)
    low = std::min(low, Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(cm.m2, Eigen::EigenvaluesOnly).eigenvalues()(0));
  if (low >= -1e-10 * scale) return 0.0;
  // The normal reference with the release's own means and variances.
  const int d = layout.covariates();
  Eigen::VectorXd mu(d), var(d);
  for (int k = 0; k < d; ++k) {
    const int col = intercept ? k + 1 : k;
    mu(k) = intercept ? cm.m2(0, col) / layout.intercept_value() : 0.0;
    const double second = cm.m2(col, col);
    var(k) = std::max({second - mu(k) * mu(k), 0.1 * second, 1e-12});
  }
  const covariate_moments ref = normal_covariate_moments(layout, mu, Eigen::MatrixXd(var.asDiagonal()));
  const Eigen::MatrixXd g_ref = detail::monomial_moment_matrix(ref, intercept);
  const double target = 1e-3 * detail::smallest_moment_eigenvalue(g_ref, ref.m2, intercept);
  // Both matrices are linear in the moments, so the mixture's matrices are the mixtures of the matrices.
  double lo = 0.0, hi = 1.0;  // the smallest eigenvalue is concave in lambda: the valid weights are an interval [l*, 1]
  for (int it = 0; it < 60; ++it) {
    const double mid = 0.5 * (lo + hi);
    const Eigen::MatrixXd g_mid = (1.0 - mid) * g + mid * g_ref;
    const Eigen::MatrixXd m2_mid = (1.0 - mid) * cm.m2 + mid * ref.m2;
    if (detail::smallest_moment_eigenvalue(g_mid, m2_mid, intercept) >= target)
      hi = mid;
    else
      lo = mid;
  }
  cm = detail::mix_moments(cm, ref, hi);
  return hi;
}

/// The index sets a <= b <= c <= d of the covariates' fourth moments that the data owner releases (not the intercept's constant
/// c^4).
class moment_release_layout {
 public:
  /// The index sets of layout's design.
  explicit moment_release_layout(const regression_layout& layout) : layout_(layout) {
    const int p = layout.columns();
    for (int a = 0; a < p; ++a)
      for (int b = a; b < p; ++b)
        for (int c = b; c < p; ++c)
          for (int d = c; d < p; ++d)
            if (!(layout.intercept() && d == 0)) sets_.push_back({a, b, c, d});
  }

  /// The design layout.
  const regression_layout& regression() const noexcept { return layout_; }
  /// Number of index sets.
  int size() const noexcept { return static_cast<int>(sets_.size()); }
  /// The k-th index set.
  const std::array<int, 4>& index_set(int k) const { return sets_[static_cast<std::size_t>(k)]; }

  /// (1/n) sum over records of x~_a x~_b x~_c x~_d for each unique index set (what the owner releases, before noise).
  Eigen::VectorXd sample_moments(const std::vector<Eigen::VectorXd>& covariates) const {
    if (covariates.empty()) throw_invalid("moment_release_layout::sample_moments", "records", 0.0, "at least 1");
    Eigen::VectorXd m = Eigen::VectorXd::Zero(size());
    for (const auto& x : covariates) {
      const Eigen::VectorXd r = layout_.design_row(x);
      for (Eigen::Index i = 0; i < r.size(); ++i) check_finite("moment_release_layout::sample_moments", "covariate", r(i));
      for (int k = 0; k < size(); ++k) {
        const auto& s = index_set(k);
        m(k) += r(s[0]) * r(s[1]) * r(s[2]) * r(s[3]);
      }
    }
    return m / static_cast<double>(covariates.size());
  }

  /// L1 and L2 sensitivity of the normalised moments for n records with covariates in the box (interval rule; one
  /// record changes each mean by at most width / n).
  std::pair<double, double> sensitivity(const std::vector<interval>& covariate_bounds, double n) const {
    check_size_match("moment_release_layout::sensitivity", "covariate bounds", static_cast<Eigen::Index>(covariate_bounds.size()),
                     "d", layout_.covariates());
    if (!(n >= 1.0 && std::isfinite(n))) throw_invalid("moment_release_layout::sensitivity", "n", n, "a finite number >= 1");
    std::vector<interval> u;
    if (layout_.intercept()) u.emplace_back(layout_.intercept_value());
    for (const auto& b : covariate_bounds) u.push_back(b);
    double l1 = 0.0, l2 = 0.0;
    for (int k = 0; k < size(); ++k) {
      const auto& s = index_set(k);
      // Group equal indices so that even powers get the tight square.
      interval r(1.0);
      for (int i = 0; i < 4;) {
        int j = i;
        while (j < 4 && s[static_cast<std::size_t>(j)] == s[static_cast<std::size_t>(i)]) ++j;
        const interval x = u[static_cast<std::size_t>(s[static_cast<std::size_t>(i)])];
        const int power = j - i;
        const interval xp = power == 1 ? x : power == 2 ? square(x) : power == 3 ? square(x) * x : square(square(x));
        r = r * xp;
        i = j;
      }
      l1 += r.width() / n;
      l2 += (r.width() / n) * (r.width() / n);
    }
    return {l1, std::sqrt(l2)};
  }

  /// The covariate_moments the sampler uses, built from a (noisy) release of the normalised moments: m4 by symmetry,
  /// m2(a, b) = m4(0, 0, a, b) / c^2 with an intercept (without one, m2 is taken from `second_moments`), then made
  /// valid by valid_covariate_moments (its mixture weight written to `*shrinkage` if given; 0 when the release was
  /// valid as it stood).
  covariate_moments moments_from_release(const Eigen::VectorXd& released, const Eigen::MatrixXd* second_moments = nullptr,
                                         double* shrinkage = nullptr) const {
    check_size_match("moment_release_layout::moments_from_release", "released moments", released.size(), "moment count", size());
    const int p = layout_.columns();
    covariate_moments cm;
    cm.p = p;
    cm.m4.assign(static_cast<std::size_t>(p) * p * p * p, 0.0);
    auto put = [&](std::array<int, 4> s, double v) {
      std::array<int, 4> q = s;
      std::sort(q.begin(), q.end());
      do {
        cm.m4[static_cast<std::size_t>(((q[0] * p + q[1]) * p + q[2]) * p + q[3])] = v;
      } while (std::next_permutation(q.begin(), q.end()));
    };
    if (layout_.intercept()) {
      const double c = layout_.intercept_value();
      put({0, 0, 0, 0}, c * c * c * c);
    }
    for (int k = 0; k < size(); ++k) put(index_set(k), released(k));
    cm.m2 = Eigen::MatrixXd::Zero(p, p);
    if (layout_.intercept()) {
      const double c2 = layout_.intercept_value() * layout_.intercept_value();
      for (int a = 0; a < p; ++a)
        for (int b = 0; b < p; ++b) cm.m2(a, b) = cm.fourth(0, 0, a, b) / c2;
    } else {
      if (second_moments == nullptr)
        throw std::invalid_argument("moments_from_release: without an intercept the second moments must be given");
      cm.m2 = *second_moments;
    }
    const double lambda = valid_covariate_moments(layout_, cm);
    if (shrinkage != nullptr) *shrinkage = lambda;
    return cm;
  }

 private:
  regression_layout layout_;
  std::vector<std::array<int, 4>> sets_;
};

}  // namespace privpost
