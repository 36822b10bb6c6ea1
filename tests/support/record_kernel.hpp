// Test support: the kernel check of a record-level sampler on two binary records (docs/exact-sums.md, test 1). The
// kernel of updating record r proposes x_r' ~ Bernoulli(theta) and accepts with min(1, exp(log_acceptance(r, x_r'))),
// exactly as the sampler computes it; pi K_r = pi must hold for the target pi.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <vector>

namespace privpost::test {

/// The records of state k: (k & 1, (k >> 1) & 1).
inline std::vector<double> two_record_state(int k) { return {static_cast<double>(k & 1), static_cast<double>((k >> 1) & 1)}; }

/// The target over the four states from f(x) = theta^x (1 - theta)^(1 - x) and a release factor of the sum s.
template <class ReleaseFactor>
std::array<double, 4> two_record_target(double theta, ReleaseFactor factor) {
  auto f = [&](double x) { return x > 0.5 ? theta : 1.0 - theta; };
  std::array<double, 4> pi{};
  double total = 0.0;
  for (int k = 0; k < 4; ++k) {
    const auto x = two_record_state(k);
    total += (pi[k] = f(x[0]) * f(x[1]) * factor(x[0] + x[1]));
  }
  for (double& v : pi) v /= total;
  return pi;
}

/// max over the states of |pi K_r - pi| for the update of record r of `chain` (theta already set on it); the chain's
/// records are replaced state by state (set_records).
template <class Chain>
double two_record_invariance_error(Chain& chain, double theta, const std::array<double, 4>& pi, std::size_t r) {
  auto f = [&](double x) { return x > 0.5 ? theta : 1.0 - theta; };
  std::array<std::array<double, 4>, 4> kernel{};
  for (int k = 0; k < 4; ++k) {
    const auto x = two_record_state(k);
    chain.set_records(x);
    double stay = 1.0;
    for (const double proposal : {0.0, 1.0}) {
      auto y = x;
      y[r] = proposal;
      const int to = static_cast<int>(y[0]) + 2 * static_cast<int>(y[1]);
      const double move = f(proposal) * std::min(1.0, std::exp(chain.log_acceptance(r, proposal)));
      kernel[k][to] += move;
      stay -= move;
    }
    kernel[k][k] += stay;
  }
  double worst = 0.0;
  for (int to = 0; to < 4; ++to) {
    double flow = 0.0;
    for (int from = 0; from < 4; ++from) flow += pi[from] * kernel[from][to];
    worst = std::max(worst, std::abs(flow - pi[to]));
  }
  return worst;
}

}  // namespace privpost::test
