// gibbs_frame, the one Gibbs-SS sweep, run on a model a user writes against statistic_model directly (no family trait):
//  1. concepts: the user's count model with log_sum_probability and sum_upper is a finite_sum_model (no natural
//     parameter, so the blocks take its log-probabilities directly); the frame with each sum block is a sampler; a
//     model without an integer-sum law is refused by the exact blocks at compile time and runs under clt_sum only;
//  2. the enumerated block's conditional law of s on the user's model equals gibbs_ss_exact's on the binomial family
//     (the same law, computed once through the family's natural-parameter shortcut, once through log_sum_probability);
//  3. simulation-based calibration at n = 10, Beta(1, 1), Laplace epsilon 0.5: the enumerated, window and corrected
//     blocks on the user's model pass the library's rule; the naive conjugate update on the release fails it;
//  4. bad input reaches the user's model with the named samplers' messages.
#include <catch2/catch.hpp>

#include <Eigen/Core>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "privpost/core/random/beta.hpp"
#include "privpost/core/random/binomial.hpp"
#include "privpost/families/binomial.hpp"
#include "privpost/inference/calibration_study.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/gibbs_frame.hpp"
#include "privpost/samplers/gibbs_ss.hpp"
#include "privpost/samplers/gibbs_ss_corrected.hpp"
#include "privpost/samplers/gibbs_ss_exact.hpp"
#include "privpost/samplers/gibbs_ss_window.hpp"
#include "support/calibration_checks.hpp"

namespace user {

// The user's prior: Beta(a, b) on the success probability.
struct beta_belief {
  double a = 1.0, b = 1.0;
  template <class G>
  double draw(G& g) const {
    return privpost::draw_beta(g, a, b);
  }
};

// The user's model: the number of successes among n independent trials of probability theta, with its moments for
// Gibbs-SS's CLT block and the conjugate update. No integer-sum law: only clt_sum applies.
struct clt_only_model {
  using parameter_type = double;
  using vector_type = Eigen::Matrix<double, 1, 1>;
  using matrix_type = Eigen::Matrix<double, 1, 1>;
  static constexpr int static_size = 1;
  Eigen::Index size() const { return 1; }
  privpost::simplex_support<1> support() const { return {}; }
  Eigen::VectorXd parameter_vector(double theta) const { return Eigen::VectorXd::Constant(1, theta); }
  void moments(double theta, double n, vector_type& mean, matrix_type& cov) const {
    mean(0) = n * theta;
    cov(0, 0) = n * theta * (1.0 - theta);
  }
  beta_belief update(const beta_belief& p, const vector_type& s, double n) const { return {p.a + s(0), p.b + n - s(0)}; }
};

// The same model with the closed-form law of the sum, Binomial(n, theta), for the exact blocks.
struct success_count_model : clt_only_model {
  double log_sum_probability(double s, double n, double theta) const {
    if (s < 0.0 || s > n) return -std::numeric_limits<double>::infinity();
    const double successes = s == 0.0 ? 0.0 : s * std::log(theta);
    const double failures = s == n ? 0.0 : (n - s) * std::log1p(-theta);
    return boost::math::lgamma(n + 1.0) - boost::math::lgamma(s + 1.0) - boost::math::lgamma(n - s + 1.0) + successes + failures;
  }
  double sum_upper(double n) const { return n; }
};

}  // namespace user

using namespace privpost;
using user::beta_belief;
using user::clt_only_model;
using user::success_count_model;

static_assert(statistic_model<success_count_model> && conjugate_prior_for<beta_belief, success_count_model>);
static_assert(finite_sum_model<success_count_model> && !natural_sum_model<success_count_model>);
static_assert(natural_sum_model<family_model<binomial_family>> && finite_sum_model<family_model<binomial_family>>);
static_assert(!integer_sum_model<clt_only_model> && statistic_model<clt_only_model>);

template <class Model, class Block>
concept frame_for = requires {
  typename gibbs_frame<Model, beta_belief, Block>;
};
static_assert(frame_for<success_count_model, enumerated_sum<laplace_mechanism>>);
static_assert(frame_for<success_count_model, window_sum<laplace_mechanism>>);
static_assert(frame_for<success_count_model, corrected_sum<success_count_model, laplace_mechanism>>);
static_assert(frame_for<clt_only_model, clt_sum<clt_only_model, laplace_mechanism>>);
static_assert(!frame_for<clt_only_model, enumerated_sum<laplace_mechanism>>);
static_assert(!frame_for<clt_only_model, window_sum<laplace_mechanism>>);
static_assert(!frame_for<success_count_model, int>);
static_assert(sampler<gibbs_frame<success_count_model, beta_belief, enumerated_sum<laplace_mechanism>>>);
static_assert(sampler<gibbs_frame<success_count_model, beta_belief, corrected_sum<success_count_model, laplace_mechanism>>>);
static_assert(sampler<gibbs_frame<clt_only_model, beta_belief, clt_sum<clt_only_model, laplace_mechanism>>>);
// A conjugate model's parameter block is the frame's own: no model draw, no NUTS warm-up to forward.
static_assert(!parameter_drawing_model<clt_only_model, beta_belief, clt_sum<clt_only_model, laplace_mechanism>>);
static_assert(!warmup_planned<gibbs_frame<clt_only_model, beta_belief, clt_sum<clt_only_model, laplace_mechanism>>>);
static_assert(!reports_draw_diagnostics<gibbs_frame<clt_only_model, beta_belief, clt_sum<clt_only_model, laplace_mechanism>>>);
static_assert(!fixed_variance_block<clt_sum<clt_only_model, laplace_mechanism>>);
static_assert(fixed_variance_block<clt_sum<clt_only_model, gaussian_mechanism>>);
static_assert(!fixed_variance_block<enumerated_sum<laplace_mechanism>>);

namespace {

Eigen::VectorXd frame_release(double z) { return Eigen::VectorXd::Constant(1, z); }

}  // namespace

TEST_CASE("enumerated_sum gives a user's model the law gibbs_ss_exact gives the binomial family", "[frame][exact]") {
  std::mt19937_64 g(3);
  const laplace_mechanism mech(1.0, 0.5);
  for (const double z : {-3.0, 4.2, 13.5}) {
    gibbs_frame mine(success_count_model{}, beta_belief{}, enumerated_sum(mech, frame_release(z)), 10.0, g);
    gibbs_ss_exact family(beta_prior(1.0, 1.0), mech, frame_release(z), 10.0, g);
    enumerated_sum<laplace_mechanism> block(mech, frame_release(z));
    success_count_model::vector_type s;
    numerical_events events;
    double theta0 = 0.5;
    block.start(success_count_model{}, beta_belief{}, theta0, 10.0, s, events, g);
    for (const double theta : {1e-9, 0.03, 0.5, 0.91, 1.0 - 1e-9}) {
      const std::vector<double> expected = family.sum_weights(theta);
      const std::vector<double>& got = block.sum_weights(success_count_model{}, theta, 10.0);
      REQUIRE(got.size() == expected.size());
      for (std::size_t k = 0; k < got.size(); ++k) {
        INFO("z " << z << ", theta " << theta << ", s " << k);
        CHECK(std::abs(got[k] - expected[k]) <= 1e-12 + 1e-9 * expected[k]);
      }
    }
    for (int i = 0; i < 50; ++i) {
      mine.step(g);
      REQUIRE(mine.statistic()(0) >= 0.0);
      REQUIRE(mine.statistic()(0) <= 10.0);
      REQUIRE(std::floor(mine.statistic()(0)) == mine.statistic()(0));
    }
  }
}

// The library's rule (support/calibration_checks.hpp): KS p > 0.001 and coverage at 50% and 90% within 3.5 binomial
// sds of nominal (at M = 400: 0.0875 and 0.0525). n = 10 is where the CLT block falls short (its 90% intervals cover
// 0.82-0.88 on the binomial, support/small_n_calibration.hpp) and each exact block must not. The naive conjugate update
// on the clamped release is the negative control: the noise sd (2.8) is a quarter of the sum's range, and it must
// fail the same rule. 100 burn-in and 600 kept sweeps per posterior: the exact blocks mix in a few sweeps at n = 10.
TEST_CASE("a user's model is calibrated under the enumerated, window and corrected blocks", "[frame][calibration][frame-sbc]") {
  constexpr double n = 10.0;
  const laplace_mechanism mech(1.0, 0.5);
  struct trial {
    Eigen::VectorXd truth, z;
  };
  auto simulate = [&](std::mt19937_64& g) {
    const double theta = beta_belief{}.draw(g);
    const auto successes = static_cast<double>(draw_binomial(g, static_cast<std::int64_t>(n), theta));
    return trial{Eigen::VectorXd::Constant(1, theta), mech.release(frame_release(successes), g)};
  };
  const int burnin = 100, draws = 600;
  std::vector<named_method<trial>> methods = {
      {"enumerated",
       [&](const trial& t, std::mt19937_64& g) {
         return single_chain(
             [&](auto& h) { return gibbs_frame(success_count_model{}, beta_belief{}, enumerated_sum(mech, t.z), n, h); }, burnin,
             draws, g);
       }},
      {"window",
       [&](const trial& t, std::mt19937_64& g) {
         return single_chain(
             [&](auto& h) { return gibbs_frame(success_count_model{}, beta_belief{}, window_sum(mech, t.z), n, h); }, burnin,
             draws, g);
       }},
      {"corrected",
       [&](const trial& t, std::mt19937_64& g) {
         return single_chain(
             [&](auto& h) {
               return gibbs_frame(success_count_model{}, beta_belief{},
                                  corrected_sum<success_count_model, laplace_mechanism>(mech, t.z), n, h);
             },
             burnin, draws, g);
       }},
      {"naive", [&](const trial& t, std::mt19937_64& g) {
         const double s = std::clamp(t.z(0), 0.0, n);
         Eigen::MatrixXd out(draws, 1);
         for (int i = 0; i < draws; ++i) out(i, 0) = draw_beta(g, 1.0 + s, 1.0 + n - s);
         return out;
       }}};
  const simulation_study study(simulate, methods);
  const auto rows = run_calibration(study, {400, 20261202, 0}).report();
  for (const char* method : {"enumerated", "window", "corrected"}) test::check_calibrated(test::row(rows, method));
  const auto& naive = test::row(rows, "naive");
  INFO("naive: KS p " << naive.ks_pvalue << ", coverage " << naive.coverage50 << " / " << naive.coverage90);
  CHECK(test::miscalibrated(naive));
}

TEST_CASE("the exact blocks check a user's model's release and n as the named samplers do", "[frame][errors]") {
  std::mt19937_64 g(5);
  const laplace_mechanism mech(1.0, 1.0);
  auto enumerated = [&](const Eigen::VectorXd& z, double n) {
    return gibbs_frame(success_count_model{}, beta_belief{}, enumerated_sum(mech, z), n, g);
  };
  auto window = [&](const Eigen::VectorXd& z, double n) {
    return gibbs_frame(success_count_model{}, beta_belief{}, window_sum(mech, z), n, g);
  };
  auto corrected = [&](const Eigen::VectorXd& z, double n) {
    return gibbs_frame(success_count_model{}, beta_belief{}, corrected_sum<success_count_model, laplace_mechanism>(mech, z), n,
                       g);
  };
  Eigen::VectorXd two(2);
  two << 1.0, 2.0;
  CHECK_THROWS_WITH(enumerated(two, 10.0), Catch::Contains("release z"));
  CHECK_THROWS_WITH(window(two, 10.0), Catch::Contains("release z"));
  CHECK_THROWS_WITH(corrected(two, 10.0), Catch::Contains("release z"));
  CHECK_THROWS_WITH(enumerated(frame_release(3.0), 10.5), Catch::Contains("whole number"));
  CHECK_THROWS_WITH(window(frame_release(3.0), 0.0), Catch::Contains("n"));
  CHECK_THROWS_WITH(corrected(frame_release(std::nan("")), 10.0), Catch::Contains("z"));
  CHECK_THROWS_WITH(enumerated(frame_release(3.0), 2e6), Catch::Contains("use gibbs_ss"));
  CHECK_THROWS_WITH(window(frame_release(1e6), 10.0), Catch::Contains("z is 1000000") && Catch::Contains("noise scales"));
  // A release Gibbs-SS's CLT block accepts runs on the model without a sum law.
  gibbs_frame clt(clt_only_model{}, beta_belief{}, clt_sum<clt_only_model, laplace_mechanism>(mech, frame_release(4.0)), 10.0, g);
  for (int i = 0; i < 20; ++i) clt.step(g);
  CHECK(clt.parameter() > 0.0);
  CHECK(clt.parameter() < 1.0);
}
