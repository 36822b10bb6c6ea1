// privpost-release for linear regression records (model linreg).
#include <algorithm>
#include <array>
#include <cmath>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <privpost/privpost.hpp>

#include "release_tool.hpp"

namespace privpost::tools::release_tool {

// Linear regression: [X^T X, X^T y, y^T y] (unique entries, the intercept's n c^2 public), records clamped into the
// declared box and mapped to [-1, 1] by it (x' = (x - centre) / half-width: public, so the statistics and their
// sensitivity depend on the declared box only, and the default priors of privpost-infer fit the scale); with
// --noisy-moments the budget is split evenly with a release of the fourth sample moments.
privpost::tools::release_record make_regression_release(const options& o) {
  using namespace privpost;
  if (o.covariates.empty() || o.response.empty())
    throw std::invalid_argument("linreg needs --covariates a,b,... and --response y");
  if (o.x_bounds.empty() || o.y_bounds.empty())
    throw std::invalid_argument("linreg needs declared bounds: --x-bounds lo,hi (every covariate) and --y-bounds lo,hi");
  auto r = tools::release_record::of_model("linreg");
  auto& declared = r.regression();
  r.mechanism = o.mechanism;
  r.version = privpost::version_string;
  declared.covariates = tools::split_list(o.covariates, "--covariates");
  declared.response = o.response;
  declared.intercept = !o.no_intercept;
  const auto xb = parse_bounds(o.x_bounds, "--x-bounds");
  declared.response_bounds = parse_bounds(o.y_bounds, "--y-bounds");
  declared.covariate_bounds.assign(declared.covariates.size(), xb);
  r.policy = "clamp";
  declared.unit_scaled = true;
  const double xc = 0.5 * (xb.first + xb.second), xh = 0.5 * (xb.second - xb.first);
  const double yc = 0.5 * (declared.response_bounds.first + declared.response_bounds.second),
               yh = 0.5 * (declared.response_bounds.second - declared.response_bounds.first);
  const int d = static_cast<int>(declared.covariates.size());
  const regression_layout layout(d, declared.intercept);
  const std::string input = shard_path(o.input);
  if (o.noisy_moments && spread_job() != nullptr)
    throw std::invalid_argument(
        "--noisy-moments under mpirun: the covariates' sample moments are released from one "
        "process's records only; run it without mpirun");
  std::vector<Eigen::VectorXd> xs;  // the mapped covariates, for --noisy-moments
  // This process's records (its shard under mpirun) and its part of the statistic, summed exactly (release_tool.hpp).
  shard_sums part = read_shard([&] {
    std::vector<std::vector<double>> columns;
    for (const auto& c : declared.covariates) columns.push_back(tools::read_csv_column(input, c, shard_rows()));
    const std::vector<double> y = tools::read_csv_column(input, o.response, shard_rows());
    shard_sums p(static_cast<std::size_t>(layout.size()));
    for (std::size_t i = 0; i < y.size(); ++i) {
      Eigen::VectorXd x(d);
      for (int k = 0; k < d; ++k) x(k) = (std::clamp(columns[static_cast<std::size_t>(k)][i], xb.first, xb.second) - xc) / xh;
      if (o.noisy_moments) xs.push_back(x);
      p.add(layout.record_statistic(
          x, (std::clamp(y[i], declared.response_bounds.first, declared.response_bounds.second) - yc) / yh));
    }
    p.records = static_cast<double>(y.size());
    return p;
  });
  const Eigen::VectorXd s = combine(part);  // every rank's part; the ranks other than 0 stop here
  r.n = part.records;
  std::vector<interval> box(static_cast<std::size_t>(d), interval(-1.0, 1.0));
  const auto [l1, l2] = layout.sensitivity(box, interval(-1.0, 1.0));
  const double share = o.noisy_moments ? 0.5 : 1.0;
  // The moments' mechanism is built first, so that both releases are charged to the ledger before any noise.
  std::optional<laplace_mechanism> moment_mechanism;
  std::optional<moment_release_layout> moments;
  if (o.noisy_moments) {
    if (!declared.intercept) throw std::invalid_argument("--noisy-moments needs the intercept column");
    moments.emplace(layout);
    moment_mechanism.emplace(moments->sensitivity(box, r.n).first, o.epsilon * share);
  }
  if (o.noisy_moments) {  // the moments' fields as they will be written, for the checks before the charge
    declared.noisy_moments.assign(static_cast<std::size_t>(moments->size()), 0.0);
    declared.moment_sensitivity = moment_mechanism->l1_sensitivity();
    declared.moment_noise = moment_mechanism->scale();
    declared.moment_epsilon = o.epsilon * share;
  }
  auto release_both = [&](const auto& m) {
    if (moment_mechanism) {
      release_into(r, m, s, *moment_mechanism);
    } else {
      release_into(r, m, s);
    }
  };
  if (o.mechanism == "laplace") {
    const laplace_mechanism m(l1, o.epsilon * share);
    r.sensitivity = l1;
    r.noise = m.scale();
    release_both(m);
  } else {
    const auto m = gaussian_mechanism::analytic(l2, o.epsilon * share, o.delta * share);
    r.sensitivity = l2;
    r.noise = m.sigma();
    r.calibration = "analytic";
    release_both(m);
  }
  if (o.noisy_moments) {
    const Eigen::VectorXd zm = moment_mechanism->release(moments->sample_moments(xs));  // OS CSPRNG; charged above
    declared.noisy_moments.assign(zm.data(), zm.data() + zm.size());
  }
  std::cerr << "privpost-release: records mapped to [-1, 1] by the declared box; linreg statistic L1 sensitivity " << l1
            << " by intervals (the paper's bound would be "
            << regression_paper_sensitivity(2.0, 2.0, static_cast<std::size_t>(layout.columns())) << ")\n";
  return r;
}

}  // namespace privpost::tools::release_tool
