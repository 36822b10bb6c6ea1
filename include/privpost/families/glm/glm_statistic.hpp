// privpost/families/glm/glm_statistic.hpp
// glm_statistic: the PASS-GLM order-2 summary statistics of logistic and Poisson regression records that DP-GLM
// releases (Kulkarni et al. 2021, Sec. 3.2-3.3, Eq. 6; docs/design-glm.md Sec. 1.3-1.4, 3.7): layout and names, record
// admission under declared public bounds, and the equal-noise L2 sensitivity.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "privpost/core/errors.hpp"
#include "privpost/families/glm/glm_sensitivity.hpp"

namespace privpost {

/// Which GLM the statistic belongs to.
enum class glm_kind {
  logistic,  ///< y in {-1, +1} (records may give {0, 1}): [y x; t2(x)]
  poisson    ///< y a count in [0, R_y]: [x; t2(x); y x; y t2(x)]
};

/// Maps a covariate value from its declared public range [lo, hi] to [-1, 1] / sqrt(d), clamping values outside the
/// range, so that d such covariates have norm <= 1 (docs/design-glm.md Sec. 4.5). The range must come from public knowledge,
/// never from the data. NaN throws std::invalid_argument.
inline double scale_to_declared_range(double value, double lo, double hi, int d) {
  constexpr const char* f = "scale_to_declared_range";
  check_finite(f, "declared range lower bound", lo);
  check_finite(f, "declared range upper bound", hi);
  if (!(lo < hi)) throw_invalid(f, "declared range upper bound", hi, "a number > the lower bound " + detail::format_value(lo));
  if (d < 1) throw_invalid(f, "number of covariates d", d, "an integer >= 1");
  if (std::isnan(value)) throw_invalid(f, "covariate value", value, "a number (not NaN)");
  const double v = std::clamp(value, lo, hi);
  return (2.0 * (v - lo) / (hi - lo) - 1.0) / std::sqrt(static_cast<double>(d));
}

/// The released statistic of DP-GLM at order 2. Pairs (j, k), j <= k, of the (augmented) covariates are listed squares
/// first, then cross terms in row order (the paper's Eq. 6 and Fig. 2); cross terms carry sqrt(2) so that
/// ||t2(x)|| = ||x||^2 and <t2(x), t2(x')> = <x, x'>^2, which the tight sensitivity needs. With an intercept the record
/// is x~ = (c, x) for a public constant c; the constant entries (c^2 in t2, and c itself for Poisson) have public sums
/// (N c^2, N c) and are not released. For Poisson, whose release also has the x block, the t2 and y t2 blocks run over
/// x alone: their entries with the intercept (sqrt2 c x_j, y c^2, sqrt2 y c x_j) are c or sqrt(2) c times entries of the
/// x and y x~ blocks, and releasing them would make the statistic's covariance singular (a zero-noise model could not
/// be evaluated) for no information. The sensitivity stays that of the full x~ layout (Sec. 2.3 at sqrt(c^2 + R^2)):
/// leaving entries out only lowers ||t - t'||.
///
/// Admission (docs/design-glm.md Sec. 1.4): x with ||x|| > radius is scaled to norm radius (never dropped: N stays public); a
/// logistic y in {0, 1} maps to 2y - 1, {-1, +1} is kept, anything else throws; a Poisson y must be an integer >= 0 and is
/// clamped to [0, y_bound]. Non-finite values throw std::invalid_argument.
class glm_statistic {
 public:
  /// Logistic regression on d covariates with ||x|| <= radius, optionally with an intercept column of constant c.
  static glm_statistic logistic(int d, double radius, std::optional<double> intercept = std::nullopt) {
    return glm_statistic(glm_kind::logistic, d, radius, 1.0, intercept, false);
  }
  /// Poisson regression on d covariates with ||x|| <= radius and counts clamped to [0, y_bound]; include_y_t2 adds the
  /// paper's y t2(x) block (not needed by PASS-GLM, informative about the linear predictor's variance).
  static glm_statistic poisson(int d, double radius, double y_bound, std::optional<double> intercept = std::nullopt,
                               bool include_y_t2 = true) {
    return glm_statistic(glm_kind::poisson, d, radius, y_bound, intercept, include_y_t2);
  }

  /// Logistic or Poisson.
  glm_kind kind() const noexcept { return kind_; }
  int covariates() const noexcept { return d_; }  ///< d
  int augmented() const noexcept { return p_; }   ///< d, plus 1 with an intercept
  /// Whether the records carry an intercept column.
  bool has_intercept() const noexcept { return intercept_.has_value(); }
  /// The intercept column's public constant c (0 without one).
  double intercept() const noexcept { return intercept_.value_or(0.0); }
  /// The declared bound R on each record's covariate norm.
  double radius() const noexcept { return radius_; }
  /// The declared bound on the response.
  double y_bound() const noexcept { return y_bound_; }
  /// Whether the statistic includes the y t^2 entries (Poisson).
  bool includes_y_t2() const noexcept { return y_t2_; }
  Eigen::Index size() const noexcept { return static_cast<Eigen::Index>(names_.size()); }  ///< D, released entries
  /// The pairs (j, k) of the augmented covariates in t2's order (the intercept is index 0 when present), constant
  /// (0, 0) entry included.
  const std::vector<std::pair<int, int>>& pairs() const noexcept { return pairs_; }
  /// Names of the released entries ("y*x1", "x1*x1", "sqrt2*x1*x2", ...; "intercept" for the constant column).
  const std::vector<std::string>& names() const noexcept { return names_; }
  /// The same names with the covariates called by the given names (d of them, e.g. the data's column names) instead
  /// of x1..xd: "y*glucose", "sqrt2*glucose*age". Throws std::invalid_argument unless there are d names.
  std::vector<std::string> names(const std::vector<std::string>& covariate_names) const {
    check_size_match("glm_statistic::names", "covariate names", static_cast<Eigen::Index>(covariate_names.size()), "d", d_);
    std::vector<std::string> out;
    build_names(out, [&](int j) {
      return intercept_ && j == 0 ? std::string("intercept") : covariate_names[static_cast<std::size_t>(intercept_ ? j - 1 : j)];
    });
    return out;
  }

  /// The L2 sensitivity with equal noise on every block: Lemma 3.3 (exact; with the intercept's range of inner
  /// products) for logistic, the exact Poisson bound of docs/design-glm.md Sec. 2.3 (Corollary 3.6 at radius 1), at
  /// sqrt(c^2 + radius^2) with an intercept (valid: the unreleased constants only lower ||t - t'||).
  double l2_sensitivity() const {
    if (kind_ == glm_kind::logistic) return logistic_joint_sensitivity(radius_, 1.0, 1.0, intercept());
    const double r = std::sqrt(intercept() * intercept() + radius_ * radius_);
    return poisson_joint_sensitivity(r, y_bound_, y_t2_);
  }

  /// An L1 sensitivity for Laplace-type mechanisms (replace-one neighbours): the smaller of sqrt(D) l2_sensitivity()
  /// (Cauchy-Schwarz) and the sum over blocks of each block's largest change, with, for ||x|| <= R,
  /// max ||x||_1 = sqrt(d) R, max sum_j x_j^2 = R^2 and max sum_{i<j} |x_i x_j| = R^2 (d - 1) / 2:
  /// - logistic, y in {-1, +1}: y c and y x change by at most 2c + 2 sqrt(d) R; the squares (each >= 0, summing to at
  ///   most R^2) by R^2; sqrt2 c x_j by 2 sqrt2 c sqrt(d) R; sqrt2 x_i x_j by sqrt2 R^2 (d - 1);
  /// - Poisson, y in [0, R_y]: x by 2 sqrt(d) R, the squares by R^2, the cross terms by sqrt2 R^2 (d - 1); y c by R_y c,
  ///   y x by 2 R_y sqrt(d) R; with the y t2 block R_y R^2 + sqrt2 R_y R^2 (d - 1) more.
  /// Always a valid bound (tests check it against random and extreme neighbours), not claimed tight.
  double l1_sensitivity() const {
    const double d = d_, r = radius_, c = intercept(), l1_x = std::sqrt(d) * r, sq = r * r,
                 cross = std::sqrt(2.0) * r * r * (d - 1.0);
    double blocks = 0.0;
    if (kind_ == glm_kind::logistic) {
      blocks = 2.0 * c + 2.0 * l1_x + sq + 2.0 * std::sqrt(2.0) * c * l1_x + cross;
    } else {
      blocks = 2.0 * l1_x + sq + cross + y_bound_ * c + 2.0 * y_bound_ * l1_x;
      if (y_t2_) blocks += y_bound_ * (sq + cross);
    }
    return std::min(blocks, std::sqrt(static_cast<double>(size())) * l2_sensitivity());
  }

  /// The admitted covariates: finite, scaled to norm radius when longer.
  Eigen::VectorXd admit_covariates(const Eigen::VectorXd& x) const {
    check_size_match("glm_statistic", "covariates", x.size(), "d", d_);
    for (Eigen::Index i = 0; i < x.size(); ++i) check_finite("glm_statistic", "covariate", x(i));
    const double norm = x.norm();
    if (norm > radius_) return x * (radius_ / norm);
    return x;
  }

  /// The admitted response: logistic {0, 1} -> {-1, +1} and {-1, +1} kept; Poisson an integer >= 0 clamped to y_bound.
  double admit_response(double y) const {
    if (kind_ == glm_kind::logistic) {
      if (y == 1.0) return 1.0;
      if (y == 0.0 || y == -1.0) return -1.0;
      throw_invalid("glm_statistic", "logistic response", y, "0, 1 (mapped to -1, +1) or -1, +1");
    }
    if (!(std::isfinite(y) && y >= 0.0 && y == std::floor(y)))
      throw_invalid("glm_statistic", "Poisson response", y, "an integer >= 0");
    return std::min(y, y_bound_);
  }

  /// t(x, y) of an admitted record (covariates of norm <= radius, response already mapped): the released entries.
  Eigen::VectorXd statistic(const Eigen::VectorXd& x, double y) const {
    Eigen::VectorXd t(size());
    write_statistic(x, y, t);
    return t;
  }

  /// Adds t of the admitted form of a raw record (x, y) to sum (size D).
  void add_record(const Eigen::VectorXd& x, double y, Eigen::VectorXd& sum) const {
    check_size_match("glm_statistic", "sum", sum.size(), "statistic size", size());
    const Eigen::VectorXd xa = admit_covariates(x);
    const double ya = admit_response(y);
    Eigen::VectorXd t(size());
    write_statistic(xa, ya, t);
    sum += t;
  }

  /// The sum of t over admitted records: rows of x are records, y their responses.
  Eigen::VectorXd sum(const Eigen::MatrixXd& x, const Eigen::VectorXd& y) const {
    check_size_match("glm_statistic", "responses", y.size(), "records", x.rows());
    Eigen::VectorXd s = Eigen::VectorXd::Zero(size());
    for (Eigen::Index i = 0; i < x.rows(); ++i) add_record(x.row(i).transpose(), y(i), s);
    return s;
  }

 private:
  glm_statistic(glm_kind kind, int d, double radius, double y_bound, std::optional<double> intercept, bool y_t2)
      : kind_(kind), d_(d), radius_(radius), y_bound_(y_bound), intercept_(intercept), y_t2_(y_t2) {
    constexpr const char* f = "glm_statistic";
    if (d < 1 || d > 1000) throw_invalid(f, "number of covariates d", d, "an integer in [1, 1000]");
    check_positive_finite(f, "radius", radius);
    if (kind == glm_kind::poisson) check_positive_finite(f, "y_bound", y_bound);
    if (intercept) check_positive_finite(f, "intercept constant", *intercept);
    p_ = d + (intercept ? 1 : 0);
    for (int j = 0; j < p_; ++j) pairs_.emplace_back(j, j);
    for (int j = 0; j < p_; ++j)
      for (int k = j + 1; k < p_; ++k) pairs_.emplace_back(j, k);
    build_names(names_, [this](int j) { return covariate_name(j); });
  }

  std::string covariate_name(int j) const {
    if (intercept_ && j == 0) return "intercept";
    // Appended rather than "x" + to_string(...): GCC 12 at -O3 warns falsely (-Wrestrict) on that operator+.
    std::string name = "x";
    name += std::to_string(intercept_ ? j : j + 1);
    return name;
  }
  bool constant_pair(const std::pair<int, int>& jk) const { return intercept_ && jk.first == 0 && jk.second == 0; }
  bool intercept_pair(const std::pair<int, int>& jk) const { return intercept_ && jk.first == 0; }
  // Names of the released entries in order, the augmented covariate j called name(j).
  template <class Name>
  void build_names(std::vector<std::string>& out, Name name) const {
    auto pair_name = [&](const std::pair<int, int>& jk) {
      const std::string a = name(jk.first), b = name(jk.second);
      return jk.first == jk.second ? a + "*" + b : "sqrt2*" + a + "*" + b;
    };
    auto t2_names = [&](const std::string& prefix, bool skip_constant, bool skip_intercept = false) {
      for (const auto& jk : pairs_)
        if (!(skip_constant && constant_pair(jk)) && !(skip_intercept && intercept_pair(jk)))
          out.push_back(prefix + pair_name(jk));
    };
    if (kind_ == glm_kind::logistic) {
      for (int j = 0; j < p_; ++j) out.push_back("y*" + name(j));
      t2_names("", true);
    } else {
      for (int j = intercept_ ? 1 : 0; j < p_; ++j) out.push_back(name(j));
      t2_names("", true, true);
      for (int j = 0; j < p_; ++j) out.push_back("y*" + name(j));
      if (y_t2_) t2_names("y*", true, true);
    }
  }

  void write_statistic(const Eigen::VectorXd& x, double y, Eigen::VectorXd& t) const {
    // The augmented record, read in place (no temporary: GCC 12 also warns falsely, -Wuse-after-free, on a copy here).
    auto xa = [&](int j) { return intercept_ ? (j == 0 ? *intercept_ : x(j - 1)) : x(j); };
    Eigen::Index i = 0;
    auto t2 = [&](double factor, bool skip_constant, bool skip_intercept = false) {
      for (const auto& jk : pairs_) {
        if ((skip_constant && constant_pair(jk)) || (skip_intercept && intercept_pair(jk))) continue;
        const double scale = jk.first == jk.second ? 1.0 : std::sqrt(2.0);
        t(i++) = factor * scale * xa(jk.first) * xa(jk.second);
      }
    };
    if (kind_ == glm_kind::logistic) {
      for (int j = 0; j < p_; ++j) t(i++) = y * xa(j);
      t2(1.0, true);  // y^2 = 1
    } else {
      for (int j = intercept_ ? 1 : 0; j < p_; ++j) t(i++) = xa(j);
      t2(1.0, true, true);
      for (int j = 0; j < p_; ++j) t(i++) = y * xa(j);
      if (y_t2_) t2(y, true, true);
    }
  }

  glm_kind kind_;
  int d_;
  int p_ = 0;
  double radius_;
  double y_bound_;
  std::optional<double> intercept_;
  bool y_t2_;
  std::vector<std::pair<int, int>> pairs_;
  std::vector<std::string> names_;
};

}  // namespace privpost
