// The one rule of mechanisms/reachable.hpp in every sampler that knows the range of its statistic: a release more than
// max_noise_scales_outside noise scales outside that range is refused with a message naming the value, and one just
// inside it is accepted. Without the rule a binomial count released as 1e20 under Gaussian noise gave a confident
// posterior (Gibbs-SS: the projection pins s at n) or the prior (the exact samplers: z - s rounds to z for every s).
#include <catch2/catch.hpp>

#include <Eigen/Core>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "privpost/families/binomial.hpp"
#include "privpost/families/multinomial.hpp"
#include "privpost/families/normal.hpp"
#include "privpost/families/poisson.hpp"
#include "privpost/families/regression/covariate_models.hpp"
#include "privpost/mechanisms/discrete_laplace.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/mechanisms/mechanism_variant.hpp"
#include "privpost/mechanisms/reachable.hpp"
#include "privpost/samplers/gibbs_ss.hpp"
#include "privpost/samplers/gibbs_ss_corrected.hpp"
#include "privpost/samplers/gibbs_ss_exact.hpp"
#include "privpost/samplers/gibbs_ss_truncated.hpp"
#include "privpost/samplers/gibbs_ss_window.hpp"
#include "privpost/samplers/record_augmented.hpp"
#include "privpost/samplers/record_regression.hpp"
#include "privpost/samplers/record_releases.hpp"

using namespace privpost;
using Catch::Matchers::Contains;

namespace {

Eigen::VectorXd one(double z) { return Eigen::VectorXd::Constant(1, z); }

// make(z) must build a chain for z inside the rule (and step it) and refuse z outside, naming `name` and the value.
template <class Make>
void check_rule(const std::string& sampler, Make make, const Eigen::VectorXd& inside, const Eigen::VectorXd& outside,
                const std::string& name, const std::string& shown) {
  INFO(sampler);
  std::mt19937_64 g(3);
  {
    auto chain = make(inside, g);
    chain.step(g);
    CHECK(chain.parameter_vector().allFinite());
  }
  try {
    (void)make(outside, g);
    FAIL("a release beyond the rule was accepted");
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    CHECK_THAT(m, Contains(name + " is " + shown));
    CHECK_THAT(m, Contains("noise scales"));
  }
}

}  // namespace

TEST_CASE("noise_scale: each mechanism's own scale", "[reachable]") {
  const laplace_mechanism lap(1.0, 0.5);
  const auto gauss = gaussian_mechanism::analytic(1.0, 0.5, 1e-6);
  CHECK(noise_scale(lap) == lap.scale());
  CHECK(noise_scale(gauss) == gauss.sigma());
  using either = mechanism_variant<laplace_mechanism, gaussian_mechanism>;
  CHECK(noise_scale(either(lap)) == lap.scale());
  CHECK(noise_scale(either(gauss)) == gauss.sigma());
}

TEST_CASE("check_reachable: the boundary and the message", "[reachable][errors]") {
  // Range [0, 10], scale 2: values in [-100, 110] pass, beyond them are refused.
  CHECK_NOTHROW(check_reachable("f", "z", 110.0, 0.0, 10.0, 10.0, 2.0));
  CHECK_NOTHROW(check_reachable("f", "z", -100.0, 0.0, 10.0, 10.0, 2.0));
  CHECK_THROWS_WITH(
      check_reachable("f", "z", 110.5, 0.0, 10.0, 10.0, 2.0),
      Contains("f: z is 110.5") && Contains("within 50 noise scales (scale 2) of [0, 10]") && Contains("n = 10 records"));
  CHECK_THROWS_AS(check_reachable("f", "z", -100.5, 0.0, 10.0, 10.0, 2.0), std::invalid_argument);
  // An unbounded side bounds nothing; NaN is never within the rule.
  CHECK_NOTHROW(check_reachable("f", "z", 1e300, 0.0, std::numeric_limits<double>::infinity(), 10.0, 2.0));
  CHECK_THROWS_AS(check_reachable("f", "z", std::nan(""), 0.0, 10.0, 10.0, 2.0), std::invalid_argument);
}

TEST_CASE("one rule: the binomial samplers refuse a count of 1e20", "[reachable][errors]") {
  const beta_prior prior(1.0, 1.0);
  const double n = 100.0;
  const laplace_mechanism lap(1.0, 0.5);  // scale 2: [0, 100] widens to [-100, 200]
  const auto gauss = gaussian_mechanism::analytic(1.0, 0.5, 1e-6);
  const double edge = n + 49.0 * lap.scale();
  check_rule(
      "gibbs_ss gaussian", [&](const Eigen::VectorXd& z, auto& g) { return gibbs_ss(prior, gauss, z, n, g); },
      one(n + 49.0 * gauss.sigma()), one(1e20), "z", "1e+20");
  check_rule(
      "gibbs_ss laplace", [&](const Eigen::VectorXd& z, auto& g) { return gibbs_ss(prior, lap, z, n, g); }, one(edge),
      one(-51.0 * lap.scale()), "z", "-102");
  check_rule(
      "gibbs_ss_exact", [&](const Eigen::VectorXd& z, auto& g) { return gibbs_ss_exact(prior, lap, z, n, g); }, one(edge),
      one(1e20), "z", "1e+20");
  check_rule(
      "gibbs_ss_window", [&](const Eigen::VectorXd& z, auto& g) { return gibbs_ss_window(prior, lap, z, n, g); }, one(edge),
      one(1e10), "z", "10000000000");
  check_rule(
      "gibbs_ss_corrected", [&](const Eigen::VectorXd& z, auto& g) { return gibbs_ss_corrected(prior, gauss, z, n, g); },
      one(edge), one(1e20), "z", "1e+20");
  check_rule(
      "record_gibbs", [&](const Eigen::VectorXd& z, auto& g) { return record_gibbs(prior, lap, z, n, g); }, one(edge),
      one(n + 51.0 * lap.scale()), "release z", "202");
  const discrete_laplace_mechanism dl(1.0, 0.5);
  check_rule(
      "gibbs_ss discrete laplace", [&](const Eigen::VectorXd& z, auto& g) { return gibbs_ss(prior, dl, z, n, g); }, one(n + 20.0),
      one(n + 1000.0), "z", "1100");
}

TEST_CASE("one rule: the multinomial names the coordinate", "[reachable][errors]") {
  const dirichlet_prior<3> prior(Eigen::Vector3d(1.0, 1.0, 1.0));
  const laplace_mechanism lap(2.0, 0.5);  // scale 4
  Eigen::VectorXd inside(2), outside(2);
  inside << 20.0, 20.0;
  outside << 30.0, 50.0 + 51.0 * 4.0;
  check_rule(
      "gibbs_ss multinomial", [&](const Eigen::VectorXd& z, auto& g) { return gibbs_ss(prior, lap, z, 50.0, g); }, inside,
      outside, "z(1)", "254");
}

TEST_CASE("one rule: truncated releases use the declared bounds", "[reachable][errors]") {
  // Records in [-1, 1] under the drop policy: the centre sums of n = 50 lie in [-50, 50] (x) and [0, 50] (x^2).
  const normal_inverse_gamma_prior prior(0.0, 1.0, 2.0, 2.0);
  const laplace_mechanism lap(3.0, 1.0);  // scale 3
  Eigen::VectorXd inside(2), outside(2);
  inside << 10.0, 40.0;
  outside << 10.0, 50.0 + 51.0 * 3.0;
  check_rule(
      "gibbs_ss_truncated normal",
      [&](const Eigen::VectorXd& z, auto& g) { return gibbs_ss_truncated(prior, lap, z, 50.0, -1.0, 1.0, g); }, inside, outside,
      "z(1)", "203");
  // Poisson counts clamped into [0, 8] and a second, dropped release: n = 20 gives [0, 160] for both.
  const poisson_gamma_prior gamma(2.0, 0.4);
  const laplace_mechanism pl(8.0, 0.5);  // scale 16
  check_rule(
      "record_gibbs_releases clamped and dropped",
      [&](const Eigen::VectorXd& z, auto& g) {
        return record_gibbs_releases(gamma, 20.0, g,
                                     record_release(pl, one(40.0), clamped_contribution<poisson_family>(0.0, 8.0)),
                                     record_release(pl, z, dropped_contribution<poisson_family>(0.0, 8.0)));
      },
      one(160.0 + 49.0 * 16.0), one(-51.0 * 16.0), "release 2 z", "-816");
}

TEST_CASE("one rule: record_regression uses the declared box", "[reachable][errors]") {
  const regression_layout layout(1, true);  // sum x, sum x^2, sum y, sum x y, sum y^2; records in [-1, 1]^2
  const std::vector<interval> box_x{interval(-1.0, 1.0)};
  const interval box_y(-1.0, 1.0);
  const laplace_mechanism lap(layout.sensitivity(box_x, box_y).first, 1.0);
  const normal_covariate_law law{Eigen::VectorXd::Zero(1), Eigen::MatrixXd::Identity(1, 1)};
  const nig_regression_prior prior(Eigen::Vector2d::Zero(), Eigen::Matrix2d::Identity(), 2.0, 1.0);
  Eigen::VectorXd inside = Eigen::VectorXd::Zero(5), outside = Eigen::VectorXd::Zero(5);
  inside(4) = 10.0;
  outside(4) = 20.0 + 51.0 * lap.scale();  // sum y^2 of 20 records lies in [0, 20]
  check_rule(
      "record_regression",
      [&](const Eigen::VectorXd& z, auto& g) { return record_regression(layout, prior, law, box_x, box_y, lap, z, 20.0, g); },
      inside, outside, "z(4)", detail::format_value(outside(4)));
}
