// Tests of privpost/families/binomial.hpp and multinomial.hpp. Properties:
//  1. both model exponential_family / conjugate_prior / log_partition_family (static_assert);
//  2. closed-form mean and covariance of t(x) equal the autodiff derivatives of the log-partition to 1e-10;
//  3. conjugate updates match the textbook formulas; prior draws have the prior's mean (5 standard errors);
//  4. projections land in the valid set and are idempotent; the multinomial projection is the Euclidean one
//     (no valid point is closer, checked on random candidates);
//  5. bad input (hyperparameters <= 0, n <= 0, invalid s, unknown category) throws.
#include <catch2/catch.hpp>

#include <random>

#include "privpost/core/random/uniform.hpp"
#include "privpost/families/autodiff_family.hpp"
#include "privpost/families/binomial.hpp"
#include "privpost/families/multinomial.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/gibbs_ss.hpp"

using namespace privpost;

static_assert(exponential_family<binomial_family>);
static_assert(exponential_family<multinomial_family<3>>);
static_assert(conjugate_prior<beta_prior>);
static_assert(conjugate_prior<dirichlet_prior<4>>);
static_assert(log_partition_family<binomial_family>);
static_assert(log_partition_family<multinomial_family<5>>);
static_assert(!exponential_family<int>);
static_assert(!conjugate_prior<binomial_family>);

TEST_CASE("binomial: closed-form moments equal autodiff of the log-partition", "[families][binomial]") {
  for (double theta : {1e-6, 0.1, 0.5, 0.77, 0.999}) {
    Eigen::Matrix<double, 1, 1> mean, cov;
    autodiff_moments<binomial_family>(theta, mean, cov);
    CHECK(mean(0) == Approx(binomial_family::mean_statistic(theta)(0)).epsilon(1e-10));
    CHECK(cov(0, 0) == Approx(binomial_family::covariance_statistic(theta)(0, 0)).epsilon(1e-10));
  }
}

TEST_CASE("multinomial: closed-form moments equal autodiff of the log-partition", "[families][multinomial]") {
  Eigen::Vector4d theta(0.1, 0.2, 0.3, 0.4);
  Eigen::Vector3d mean;
  Eigen::Matrix3d cov;
  autodiff_moments<multinomial_family<4>>(theta, mean, cov);
  CHECK((mean - multinomial_family<4>::mean_statistic(theta)).norm() < 1e-10);
  CHECK((cov - multinomial_family<4>::covariance_statistic(theta)).norm() < 1e-10);
  theta << 0.97, 0.01, 0.01, 0.01;
  autodiff_moments<multinomial_family<4>>(theta, mean, cov);
  CHECK((cov - multinomial_family<4>::covariance_statistic(theta)).norm() < 1e-10);
}

TEST_CASE("conjugate updates and prior draws", "[families]") {
  const beta_prior post = beta_prior(2.0, 3.0).update(Eigen::Matrix<double, 1, 1>(4.0), 10.0);
  CHECK(post.a() == 6.0);
  CHECK(post.b() == 9.0);
  const dirichlet_prior<3> d(Eigen::Vector3d(1.0, 2.0, 3.0));
  const auto dp = d.update(Eigen::Vector2d(4.0, 5.0), 12.0);
  CHECK(dp.alpha() == Eigen::Vector3d(5.0, 7.0, 6.0));
  std::mt19937_64 g(3);
  double total = 0.0;
  for (int i = 0; i < 20000; ++i) total += post.draw(g);
  // Beta(6, 9): mean 0.4, sd 0.1225 -> standard error of the mean of 20000 draws 8.7e-4.
  CHECK(std::abs(total / 20000.0 - 0.4) < 5 * 8.7e-4);
}

TEST_CASE("projections onto the valid sets", "[families]") {
  using mn = multinomial_family<4>;
  numerical_events ev;
  Eigen::Matrix<double, 1, 1> low(-3.0), high(13.0);
  CHECK(binomial_family::support_type::project(low, 10.0, ev));
  CHECK(low(0) == 0.0);
  CHECK(binomial_family::support_type::project(high, 10.0, ev));
  CHECK(high(0) == 10.0);
  std::mt19937_64 g(4);
  for (int i = 0; i < 2000; ++i) {
    Eigen::Vector3d s;
    for (int k = 0; k < 3; ++k) s(k) = 30.0 * draw_uniform(g) - 10.0;
    Eigen::Vector3d p = s;
    mn::support_type::project(p, 10.0, ev);
    REQUIRE(mn::support_type::contains(p, 10.0));
    Eigen::Vector3d again = p;
    REQUIRE(!mn::support_type::project(again, 10.0, ev));
    // No random valid point is closer to s than its projection.
    for (int c = 0; c < 20; ++c) {
      Eigen::Vector3d q;
      for (int k = 0; k < 3; ++k) q(k) = 10.0 * draw_uniform(g);
      if (!mn::support_type::contains(q, 10.0)) continue;
      REQUIRE((q - s).norm() >= (p - s).norm() - 1e-9);
    }
  }
}

TEST_CASE("bounded families: bad input", "[families][errors]") {
  CHECK_THROWS_AS(beta_prior(0.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(beta_prior(1.0, -2.0), std::invalid_argument);
  CHECK_THROWS_AS(beta_prior(1.0, 1.0).update(Eigen::Matrix<double, 1, 1>(1.0), 0.0), std::invalid_argument);
  CHECK_THROWS_AS(beta_prior(1.0, 1.0).update(Eigen::Matrix<double, 1, 1>(11.0), 10.0), std::invalid_argument);
  CHECK_THROWS_AS(dirichlet_prior<3>(Eigen::Vector3d(1.0, 0.0, 1.0)), std::invalid_argument);
  CHECK_THROWS_AS(dirichlet_prior<3>(Eigen::Vector3d(1.0, 1.0, 1.0)).update(Eigen::Vector2d(6.0, 6.0), 10.0),
                  std::invalid_argument);
  CHECK_THROWS_AS(multinomial_family<3>::statistic(3), std::invalid_argument);
  CHECK_THROWS_AS(multinomial_family<3>::statistic(-1), std::invalid_argument);
}

namespace {
// A Bernoulli family that gives only its log-partition: no mean_statistic, no covariance_statistic.
struct bernoulli_without_moments {
  static constexpr int dimension = 1;
  static constexpr int parameter_dimension = 1;
  using record_type = double;
  using parameter_type = double;
  using vector_type = Eigen::Matrix<double, 1, 1>;
  static vector_type statistic(double x) { return vector_type(x); }
  static vector_type natural_parameter(double theta) { return vector_type(std::log(theta / (1.0 - theta))); }
  template <class T>
  static T log_partition(const std::array<T, 1>& eta) {
    using std::exp;
    using std::log;
    return log(1.0 + exp(eta[0]));
  }
  static vector_type lower_bound(double) { return vector_type(0.0); }
  static vector_type upper_bound(double n) { return vector_type(n); }
  static bool is_valid(const vector_type& s, double n) { return s(0) >= 0.0 && s(0) <= n; }
  static vector_type project(const vector_type& s, double n) { return vector_type(std::clamp(s(0), 0.0, n)); }
  static Eigen::Matrix<double, 1, 1> to_vector(double theta) { return Eigen::Matrix<double, 1, 1>(theta); }
};
using autodiff_bernoulli = complete_family<bernoulli_without_moments>;
struct autodiff_beta_prior {
  using family = autodiff_bernoulli;
  beta_prior inner;
  autodiff_beta_prior update(const Eigen::Matrix<double, 1, 1>& s, double n) const { return {inner.update(s, n)}; }
  template <class G>
  double draw(G& g) const {
    return inner.draw(g);
  }
};
}  // namespace

static_assert(!exponential_family<bernoulli_without_moments>);
static_assert(exponential_family<autodiff_bernoulli>);
static_assert(conjugate_prior<autodiff_beta_prior>);

TEST_CASE("a family with only a log-partition gets its moments by autodiff and runs in Gibbs-SS", "[families]") {
  for (double theta : {0.05, 0.5, 0.9}) {
    CHECK(autodiff_bernoulli::mean_statistic(theta)(0) == Approx(theta).epsilon(1e-12));
    CHECK(autodiff_bernoulli::covariance_statistic(theta)(0, 0) == Approx(theta * (1 - theta)).epsilon(1e-12));
  }
  std::mt19937_64 g(8);
  Eigen::VectorXd z(1);
  z << 40.0;
  gibbs_ss a(autodiff_beta_prior{beta_prior(1.0, 1.0)}, laplace_mechanism(1.0, 1.0), z, 100.0, g);
  std::mt19937_64 h(8);
  gibbs_ss b(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 1.0), z, 100.0, h);
  for (int i = 0; i < 200; ++i) {
    a.step(g);
    b.step(h);
  }
  // Same engine stream, same model: the chains agree to rounding.
  CHECK(a.parameter() == Approx(b.parameter()).epsilon(1e-9));
}
