// multinomial: a survey releases how many of 500 respondents chose each of K = 3 answers (the first K - 1 counts; n is
// public) under the Gaussian mechanism with the analytic calibration, and the analyst infers the answer shares.
#include <privpost/families/multinomial.hpp>
#include <privpost/inference/convergence_check.hpp>
#include <privpost/inference/run.hpp>
#include <privpost/mechanisms/gaussian.hpp>
#include <privpost/samplers/gibbs_ss.hpp>

#include <cstdio>
#include <random>

int main() {
  constexpr int K = 3;
  using family = privpost::multinomial_family<K>;
  std::mt19937_64 simulate(11);
  const Eigen::Vector3d truth(0.5, 0.3, 0.2);
  Eigen::Vector2d s = Eigen::Vector2d::Zero();
  const double n = 500;
  for (int i = 0; i < n; ++i) s += family::statistic(family::draw_record(truth, simulate));

  // One respondent changing answer moves two counts by one: L2 sensitivity sqrt(2).
  const auto mechanism = privpost::gaussian_mechanism::analytic(family::l2_sensitivity, 0.5, 1e-6);
  const Eigen::VectorXd z = mechanism.release(Eigen::VectorXd(s));  // OS CSPRNG noise
  std::printf("released counts (%.1f, %.1f) of n = %.0f; Gaussian sigma %.2f (epsilon 0.5, delta 1e-6)\n", z(0), z(1), n,
              mechanism.sigma());

  const privpost::dirichlet_prior<K> prior(Eigen::Vector3d::Ones());
  privpost::run_options options;  // the chains; run() also takes writers and a convergence target
  options.inference.draws = 2000;
  options.inference.seed = 3;
  const auto result = privpost::run([&](auto& g) { return privpost::gibbs_ss(prior, mechanism, z, n, g); }, options).result;
  for (int k = 0; k < K; ++k) {
    const auto ci = result.draws.interval(0.9, k);
    std::printf("theta_%d: mean %.3f, 90%% interval [%.3f, %.3f], R-hat %.3f\n", k, result.draws.mean(k), ci.lower, ci.upper,
                result.draws.rhat(k));
  }
  for (const auto& w : privpost::convergence_warnings(result.draws, result.events, result.sweeps))
    std::printf("WARNING: %s\n", w.c_str());
  return 0;
}
