// A user's record model, written outside the library as a user writes it, for the tests of the sharded record frame
// (threads and MPI ranks).
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <vector>

#include "privpost/core/random/normal.hpp"
#include "privpost/samplers/record_sharded.hpp"

namespace privpost_test {

// A user's record model that is not an exponential family of privpost's (dapper's example, docs/record-level.md):
// y_i ~ N(theta, 1), theta ~ N(0, 2^2), the records' mean released with Gaussian noise of a published sd. Its
// summary, the sum of y in a 1 x 1 matrix, adds over shards, so sharded_record_frame can place it.
struct summed_normal_mean {
  using parameter_type = double;
  using record_type = double;
  using vector_type = Eigen::Matrix<double, 1, 1>;
  double n;
  template <class G>
  double draw_prior(G& g) const {
    return 2.0 * privpost::draw_normal(g);
  }
  template <class G>
  double draw_record(double theta, std::size_t, G& g) const {
    return theta + privpost::draw_normal(g);
  }
  vector_type contribution(double y, std::size_t) const { return vector_type(y / n); }
  void summarise(const std::vector<double>& y, Eigen::MatrixXd& s) const {
    s.setZero(1, 1);
    for (const double v : y) s(0, 0) += v;
  }
  template <class G>
  void update_from_summary(double& theta, const Eigen::MatrixXd& s, double count, G& g) const {
    const double variance = 1.0 / (0.25 + count);
    theta = variance * s(0, 0) + std::sqrt(variance) * privpost::draw_normal(g);
  }
  template <class G>
  void update_parameter(double& theta, const std::vector<double>& y, G& g) const {
    Eigen::MatrixXd s;
    summarise(y, s);
    update_from_summary(theta, s, static_cast<double>(y.size()), g);
  }
  Eigen::VectorXd parameter_vector(double theta) const { return Eigen::VectorXd::Constant(1, theta); }
};
static_assert(privpost::summed_record_model<summed_normal_mean>);

}  // namespace privpost_test
