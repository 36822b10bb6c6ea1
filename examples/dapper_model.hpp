// The record model of the dapper R package's own example (Ju et al. 2022; docs/record-level.md), written as a privpost
// user would write it: n records y_i ~ N(theta, 1), theta ~ N(0, 2^2), and the records' mean released with Gaussian
// noise of a published sd. dapper's four modules map to members: latent_f to draw_prior and draw_record, statistic_f to
// contribution, posterior_f to update_parameter, mechanism_f to the noise kernel. transport is the one addition: y -
// theta is N(0, 1) whatever theta, so the records can move with theta by a shift, which lets the record-level frame
// mix where the noise dominates the records (docs/record-level.md, "The transport move").
#pragma once

#include <privpost/core/random/normal.hpp>

#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <vector>

namespace my {

struct normal_mean_model {
  using parameter_type = double;
  using record_type = double;
  using vector_type = Eigen::Matrix<double, 1, 1>;
  double n;               // the public number of records
  double prior_sd = 2.0;  // theta ~ N(0, prior_sd^2)

  template <class G>
  double draw_prior(G& g) const {
    return prior_sd * privpost::draw_normal(g);
  }
  template <class G>
  double draw_record(double theta, std::size_t, G& g) const {
    return theta + privpost::draw_normal(g);
  }
  // Each record adds y_i / n to the released mean.
  vector_type contribution(double y, std::size_t) const { return vector_type(y / n); }
  // theta | y: the normal update, from the records themselves (any step that leaves p(theta | y) invariant will do).
  template <class G>
  void update_parameter(double& theta, const std::vector<double>& y, G& g) const {
    double sum = 0.0;
    for (const double v : y) sum += v;
    const double variance = 1.0 / (1.0 / (prior_sd * prior_sd) + n);
    theta = variance * sum + std::sqrt(variance) * privpost::draw_normal(g);
  }
  Eigen::VectorXd parameter_vector(double theta) const { return Eigen::VectorXd::Constant(1, theta); }
  double transport(double y, std::size_t, double from, double to) const { return y + (to - from); }
  double log_prior(double theta) const { return -0.5 * theta * theta / (prior_sd * prior_sd); }
};

// The published noise on the mean, as a kernel: log p(z | s) up to a constant.
struct mean_noise {
  double sd;
  template <class Z, class S>
  double log_likelihood(const Z& z, const S& s) const {
    const double r = (z(0) - s(0)) / sd;
    return -0.5 * r * r;
  }
};

// The exact posterior of theta given the release z of n records: z | theta ~ N(theta, 1/n + sd^2).
struct normal_mean_posterior {
  double mean, sd;
  normal_mean_posterior(const normal_mean_model& m, double noise_sd, double z) {
    const double v = 1.0 / m.n + noise_sd * noise_sd;
    const double precision = 1.0 / (m.prior_sd * m.prior_sd) + 1.0 / v;
    mean = z / v / precision;
    sd = std::sqrt(1.0 / precision);
  }
};

}  // namespace my
