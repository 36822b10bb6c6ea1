// Fixture of the sharded histogram tests (threads and MPI ranks): a 3 x 3 table of 30 records released twice, both
// 1-way marginals (Laplace, epsilon 1) and later the 2-way table (analytic Gaussian, epsilon 1, delta 1e-5), with fixed
// released values, so that every sampler of cell records is compared on the same two releases.
#pragma once

#include <Eigen/Core>
#include <vector>

#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/mechanisms/linear_queries.hpp"
#include "privpost/samplers/record_histogram.hpp"

namespace privpost_test {

/// The records of the fixture's table.
inline constexpr double two_release_records = 30.0;

/// The two releases of the 3 x 3 table (file comment), a fresh vector each call (samplers take it by value).
inline std::vector<privpost::histogram_measurement> two_release_3x3() {
  using namespace privpost;
  const auto q1 = linear_queries::marginals({3, 3}, {{0}, {1}});
  const auto q2 = linear_queries::marginals({3, 3}, {{0, 1}});
  Eigen::VectorXd z1(6), z2(9);
  z1 << 12.4, 9.1, 8.8, 5.2, 14.9, 10.3;
  z2 << 4.1, 6.3, 1.2, 0.4, 5.5, 3.9, 0.2, 3.3, 5.6;
  std::vector<histogram_measurement> m;
  m.emplace_back(q1, laplace_mechanism(q1.l1_sensitivity(), 1.0), z1);
  m.emplace_back(q2, gaussian_mechanism::analytic(q2.l2_sensitivity(), 1.0, 1e-5), z2);
  return m;
}

}  // namespace privpost_test
