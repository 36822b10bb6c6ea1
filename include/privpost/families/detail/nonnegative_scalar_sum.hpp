// privpost/families/detail/nonnegative_scalar_sum.hpp
// The valid set shared by one-statistic families whose records are >= 0 and whose parameter is one number
// (exponential, Poisson): sums of n records lie in [0, inf), projection clips at 0. Families inherit these members.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <limits>

namespace privpost::detail {

struct nonnegative_scalar_sum {
  using vector_type = Eigen::Matrix<double, 1, 1>;
  static vector_type lower_bound(double) { return vector_type(0.0); }
  static vector_type upper_bound(double) { return vector_type(std::numeric_limits<double>::infinity()); }
  static bool is_valid(const vector_type& s, double) { return s(0) >= 0.0; }
  static vector_type project(const vector_type& s, double) { return vector_type(std::max(s(0), 0.0)); }
  static Eigen::Matrix<double, 1, 1> to_vector(double theta) { return Eigen::Matrix<double, 1, 1>(theta); }
};

}  // namespace privpost::detail
