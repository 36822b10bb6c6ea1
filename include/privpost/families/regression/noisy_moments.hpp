// privpost/families/regression/noisy_moments.hpp
// moment_release_layout and moments_from_release: Gibbs-SS-Noisy's covariate moments (001 Sec. 3.4.4). The data owner
// releases the normalised fourth sample moments (1/n) sum x~_a x~_b x~_c x~_d (unique index sets; the all-intercept
// entry c^4 is public) with their own share of the budget; the analyst rebuilds the moment tensor from the release.
#pragma once

#include <Eigen/Core>
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

class moment_release_layout {
 public:
  explicit moment_release_layout(const regression_layout& layout) : layout_(layout) {
    const int p = layout.columns();
    for (int a = 0; a < p; ++a)
      for (int b = a; b < p; ++b)
        for (int c = b; c < p; ++c)
          for (int d = c; d < p; ++d)
            if (!(layout.intercept() && d == 0)) sets_.push_back({a, b, c, d});
  }

  const regression_layout& regression() const noexcept { return layout_; }
  int size() const noexcept { return static_cast<int>(sets_.size()); }
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
  /// m2(a, b) = m4(0, 0, a, b) / c^2 with an intercept (without one, m2 is taken from `second_moments`).
  covariate_moments moments_from_release(const Eigen::VectorXd& released, const Eigen::MatrixXd* second_moments = nullptr) const {
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
    return cm;
  }

 private:
  regression_layout layout_;
  std::vector<std::array<int, 4>> sets_;
};

}  // namespace privpost
