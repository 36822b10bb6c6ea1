// Tests of the unbounded families (exponential, Poisson, normal with known variance, normal-inverse-gamma) and of
// privpost/families/truncation.hpp. Properties:
//  1. every family models exponential_family / truncatable_family / log_partition_family, each prior conjugate_prior;
//  2. closed-form mean and covariance of t(x) equal autodiff of the log-partition to 1e-10 (every built-in family);
//  3. Lemma 1 (autodiff of log(F(w) - F(v)) in eta) equals numerical quadrature (Boost.Math Gauss-Kronrod) of the
//     truncated density to 1e-8 relative, including intervals deep in a tail where F(w) - F(v) underflows;
//     for the Poisson, direct summation of the pmf;
//  4. the joint three-region model's total has mean n E[t(x)] and covariance n Var[t(x)] of the untruncated family;
//  5. conjugate updates against textbook formulas, draw_poisson against its pmf (chi-square), bad input throws.
#include <catch2/catch.hpp>

#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <cmath>
#include <limits>
#include <random>

#include "privpost/core/random/poisson.hpp"
#include "privpost/families/autodiff_family.hpp"
#include "privpost/families/exponential.hpp"
#include "privpost/families/normal.hpp"
#include "privpost/families/normal_known_variance.hpp"
#include "privpost/families/poisson.hpp"
#include "privpost/families/truncation.hpp"

using namespace privpost;

static_assert(truncatable_family<exponential_rate_family>);
static_assert(truncatable_family<poisson_family>);
static_assert(truncatable_family<normal_known_variance_family>);
static_assert(truncatable_family<normal_family>);
static_assert(log_partition_family<exponential_rate_family>);
static_assert(log_partition_family<poisson_family>);
static_assert(log_partition_family<normal_known_variance_family>);
static_assert(log_partition_family<normal_family>);
static_assert(conjugate_prior<exponential_gamma_prior>);
static_assert(conjugate_prior<poisson_gamma_prior>);
static_assert(conjugate_prior<normal_mean_prior>);
static_assert(conjugate_prior<normal_inverse_gamma_prior>);

namespace {
const double inf = std::numeric_limits<double>::infinity();

template <class F>
void require_autodiff_matches(const typename F::parameter_type& theta) {
  statistic_t<F> mean;
  covariance_t<F> cov;
  autodiff_moments<F>(theta, mean, cov);
  const statistic_t<F> m = F::mean_statistic(theta);
  const covariance_t<F> c = F::covariance_statistic(theta);
  INFO("autodiff mean " << mean.transpose() << " vs " << m.transpose());
  REQUIRE((mean - m).norm() <= 1e-10 * std::max(1.0, m.norm()));
  REQUIRE((cov - c).norm() <= 1e-10 * std::max(1.0, c.norm()));
}

// Truncated moments of t(x) = (x, x^2)[0..D) by Gauss-Kronrod quadrature of the density divided by its value at the
// interval's left end (so deep-tail intervals do not underflow), with moments taken about the mean (so x ~ 1000 does
// not cancel digits in E[x^2] - E[x]^2). log_density(x) is any unnormalised log density.
template <int D, class LogDensity>
void quadrature_moments(LogDensity log_density, double v, double w, Eigen::Matrix<double, D, 1>& mean,
                        Eigen::Matrix<double, D, D>& cov) {
  using boost::math::quadrature::gauss_kronrod;
  const double ref = std::max(log_density(v), log_density(w));
  auto moment = [&](int k, double c) {
    auto f = [&](double x) { return std::pow(x - c, k) * std::exp(log_density(x) - ref); };
    return gauss_kronrod<double, 61>::integrate(f, v, w, 15, 1e-15);
  };
  const double z = moment(0, 0.0);
  const double c = moment(1, 0.0) / z;
  const double y1 = moment(1, c) / z, y2 = moment(2, c) / z;
  const double var = y2 - y1 * y1;
  if constexpr (D == 1) {
    mean(0) = c + y1;
    cov(0, 0) = var;
  } else {
    const double y3 = moment(3, c) / z, y4 = moment(4, c) / z;
    const double cov_y_y2 = y3 - y1 * y2, var_y2 = y4 - y2 * y2;
    mean << c + y1, (c + y1) * (c + y1) + var;
    cov << var, cov_y_y2 + 2.0 * c * var, cov_y_y2 + 2.0 * c * var, var_y2 + 4.0 * c * cov_y_y2 + 4.0 * c * c * var;
  }
}

template <class F>
void require_close(const region_moments<F>& r, const statistic_t<F>& mean, const covariance_t<F>& cov, double tol) {
  INFO("Lemma 1 mean " << r.mean.transpose() << " vs quadrature " << mean.transpose());
  INFO("Lemma 1 cov " << r.cov << " vs quadrature " << cov);
  for (int i = 0; i < F::dimension; ++i) {
    REQUIRE(std::abs(r.mean(i) - mean(i)) <= tol * std::abs(mean(i)));
    for (int j = 0; j < F::dimension; ++j) REQUIRE(std::abs(r.cov(i, j) - cov(i, j)) <= tol * std::abs(cov(i, j)));
  }
}
}  // namespace

namespace {
// The exponential family with its moments in one call and no mean_statistic / covariance_statistic (deleted, so the
// concepts cannot find them): the form a user's family may take.
struct moments_only_exponential : exponential_rate_family {
  static void mean_statistic() = delete;
  static void covariance_statistic() = delete;
  static void moments(double lambda, vector_type& mean, Eigen::Matrix<double, 1, 1>& cov) {
    mean = exponential_rate_family::mean_statistic(lambda);
    cov = exponential_rate_family::covariance_statistic(lambda);
  }
};
}  // namespace

TEST_CASE("truncated moments of a family that gives moments() alone", "[truncation]") {
  static_assert(truncatable_family<moments_only_exponential>);
  for (const double lambda : {0.3, 2.0}) {
    const auto a = truncated_moments<moments_only_exponential>(lambda, 0.5, 4.0);
    const auto b = truncated_moments<exponential_rate_family>(lambda, 0.5, 4.0);
    CHECK(a.mean(0) == b.mean(0));
    CHECK(a.cov(0, 0) == b.cov(0, 0));
    CHECK(a.log_probability == b.log_probability);
  }
}

TEST_CASE("unbounded families: closed-form moments equal autodiff of the log-partition", "[families]") {
  for (double lambda : {0.01, 1.0, 37.0}) {
    require_autodiff_matches<exponential_rate_family>(lambda);
    require_autodiff_matches<poisson_family>(lambda);
  }
  require_autodiff_matches<normal_known_variance_family>({-3.0, 2.0});
  require_autodiff_matches<normal_family>({1.5, 0.7});
  require_autodiff_matches<normal_family>({-20.0, 9.0});
}

TEST_CASE("Lemma 1 equals quadrature: exponential", "[families][truncation]") {
  const double lambda = 0.5;
  for (const auto& pair_ :
       {std::pair{0.0, 3.0}, std::pair{1.0, 4.0}, std::pair{2.0, inf}, std::pair{100.0, 110.0}, std::pair{2000.0, 2000.5}}) {
    const auto v = pair_.first;
    const auto w = pair_.second;
    INFO("[" << v << ", " << w << "]");
    const auto r = truncated_moments<exponential_rate_family>(lambda, v, w);
    Eigen::Matrix<double, 1, 1> mean, cov;
    quadrature_moments<1>([&](double x) { return -lambda * x; }, v, std::isinf(w) ? v + 200.0 / lambda : w, mean, cov);
    require_close(r, mean, cov, 1e-8);
  }
  // Deep in the tail the probability underflows but its logarithm is exact.
  const auto deep = truncated_moments<exponential_rate_family>(lambda, 2000.0, 2000.5);
  CHECK(deep.probability == 0.0);
  CHECK(deep.log_probability == Approx(-1000.0 + std::log(-std::expm1(-0.25))).epsilon(1e-12));
}

TEST_CASE("Lemma 1 equals quadrature: normal with known variance and normal-inverse-gamma", "[families][truncation]") {
  const normal_mean_parameter p{1.0, 2.0};
  for (const auto& pair_ :
       {std::pair{-1.0, 2.0}, std::pair{3.0, 7.0}, std::pair{-inf, -2.0}, std::pair{41.0, 45.0}, std::pair{-80.0, -79.0}}) {
    const auto v = pair_.first;
    const auto w = pair_.second;
    INFO("known variance, [" << v << ", " << w << "]");
    const auto r = truncated_moments<normal_known_variance_family>(p, v, w);
    Eigen::Matrix<double, 1, 1> mean, cov;
    quadrature_moments<1>([&](double x) { return -0.5 * (x - 1.0) * (x - 1.0) / 4.0; }, std::isinf(v) ? w - 60.0 : v, w, mean,
                          cov);
    require_close(r, mean, cov, 1e-8);
  }
  const normal_parameter q{0.5, 1.7};
  for (const auto& pair_ : {std::pair{-1.0, 2.0}, std::pair{0.9, 1.3}, std::pair{10.0, inf}, std::pair{-inf, -12.0}}) {
    const auto v = pair_.first;
    const auto w = pair_.second;
    INFO("normal, [" << v << ", " << w << "]");
    const auto r = truncated_moments<normal_family>(q, v, w);
    Eigen::Vector2d mean;
    Eigen::Matrix2d cov;
    quadrature_moments<2>([&](double x) { return -0.5 * (x - 0.5) * (x - 0.5) / 1.7; }, std::isinf(v) ? w - 40.0 : v,
                          std::isinf(w) ? v + 40.0 : w, mean, cov);
    require_close(r, mean, cov, 1e-8);
  }
}

TEST_CASE("Lemma 1 equals direct summation: Poisson", "[families][truncation]") {
  for (double lambda : {0.7, 12.0, 400.0}) {
    for (const auto& pair_ : {std::pair{0.0, 3.0}, std::pair{2.0, 20.0}, std::pair{5.0, inf},
                              std::pair{std::floor(lambda) + 60.0, std::floor(lambda) + 70.0}}) {
      const auto v = pair_.first;
      const auto w = pair_.second;
      INFO("lambda " << lambda << ", [" << v << ", " << w << "]");
      const auto r = truncated_moments<poisson_family>(lambda, v, w);
      long double z = 0, m1 = 0, m2 = 0;
      const double ref = v * std::log(lambda) - std::lgamma(v + 1.0);
      for (double k = v; k <= std::min(w, v + 5000.0); k += 1.0) {
        const long double p = std::exp(static_cast<long double>(k * std::log(lambda) - std::lgamma(k + 1.0) - ref));
        z += p;
        m1 += p * k;
        m2 += p * k * k;
      }
      const double mean = static_cast<double>(m1 / z), var = static_cast<double>(m2 / z - (m1 / z) * (m1 / z));
      CHECK(r.mean(0) == Approx(mean).epsilon(1e-8));
      CHECK(r.cov(0, 0) == Approx(var).epsilon(1e-7));
    }
  }
}

TEST_CASE("the joint three-region model's total is the untruncated family", "[families][truncation]") {
  const double n = 250.0;
  {
    using F = exponential_rate_family;
    const auto r = region_split<F>(0.8, 0.5, 4.0);
    Eigen::Matrix<double, 3, 1> m;
    Eigen::Matrix3d c;
    joint_region_moments<F>(r, n, m, c);
    const Eigen::RowVector3d ones = Eigen::RowVector3d::Ones();
    CHECK((ones * m)(0) == Approx(n / 0.8).epsilon(1e-10));
    CHECK((ones * c * ones.transpose())(0, 0) == Approx(n / 0.64).epsilon(1e-10));
    // The regions' probabilities add to one.
    CHECK(r.lower.probability + r.centre.probability + r.upper.probability == Approx(1.0).epsilon(1e-12));
  }
  {
    using F = poisson_family;
    const auto r = region_split<F>(6.5, 3.0, 9.0);
    Eigen::Matrix<double, 3, 1> m;
    Eigen::Matrix3d c;
    joint_region_moments<F>(r, n, m, c);
    CHECK(m.sum() == Approx(n * 6.5).epsilon(1e-10));
    CHECK(c.sum() == Approx(n * 6.5).epsilon(1e-9));
  }
  {
    using F = normal_family;
    const normal_parameter p{0.3, 2.0};
    const auto r = region_split<F>(p, -1.0, 2.5);
    Eigen::Matrix<double, 6, 1> m;
    Eigen::Matrix<double, 6, 6> c;
    joint_region_moments<F>(r, n, m, c);
    Eigen::Matrix<double, 2, 6> sum;
    sum << Eigen::Matrix2d::Identity(), Eigen::Matrix2d::Identity(), Eigen::Matrix2d::Identity();
    CHECK(((sum * m) - n * F::mean_statistic(p)).norm() < 1e-9 * n);
    CHECK(((sum * c * sum.transpose()) - n * F::covariance_statistic(p)).norm() < 1e-9 * n * F::covariance_statistic(p).norm());
    // Dropping the cross-covariances (as the published code does) inflates the variance of a positive statistic's
    // total: here x^2, whose regions' means are all positive, so every dropped term -n q q' mu mu' is negative.
    Eigen::Matrix<double, 6, 6> block_diagonal = Eigen::Matrix<double, 6, 6>::Zero();
    for (int i = 0; i < 3; ++i) block_diagonal.block<2, 2>(2 * i, 2 * i) = c.block<2, 2>(2 * i, 2 * i);
    CHECK((sum * block_diagonal * sum.transpose())(1, 1) > 1.05 * (sum * c * sum.transpose())(1, 1));
  }
}

TEST_CASE("unbounded priors: conjugate updates", "[families]") {
  const auto e = exponential_gamma_prior(2.0, 3.0).update(Eigen::Matrix<double, 1, 1>(5.0), 10.0);
  CHECK((e.shape() == 12.0 && e.rate() == 8.0));
  const auto p = poisson_gamma_prior(2.0, 3.0).update(Eigen::Matrix<double, 1, 1>(5.0), 10.0);
  CHECK((p.shape() == 7.0 && p.rate() == 13.0));
  const auto k = normal_mean_prior(0.0, 2.0, 1.0).update(Eigen::Matrix<double, 1, 1>(8.0), 4.0);
  CHECK(k.sd0() == Approx(1.0 / std::sqrt(0.25 + 4.0)));
  CHECK(k.mean0() == Approx(8.0 / 4.25));
  const auto g = normal_inverse_gamma_prior(1.0, 2.0, 3.0, 4.0).update(Eigen::Vector2d(6.0, 14.0), 3.0);
  // xbar = 2, scatter = 14 - 12 = 2; b' = 4 + 1 + 2*3*(1)^2/(2*5) = 5.6
  CHECK(g.kappa() == 5.0);
  CHECK(g.m() == Approx(8.0 / 5.0));
  CHECK(g.a() == 4.5);
  CHECK(g.b() == Approx(5.6));
}

TEST_CASE("draw_poisson matches the pmf (chi-square)", "[draws]") {
  std::mt19937_64 g(61);
  for (double lambda : {0.3, 4.0, 25.0, 900.0}) {
    INFO("lambda " << lambda);
    const int n = 40000;
    std::vector<double> counts(200, 0.0);
    const double lo = std::max(0.0, std::floor(lambda - 5.0 * std::sqrt(lambda)) - 1.0);
    for (int i = 0; i < n; ++i) {
      const double x = draw_poisson(g, lambda);
      REQUIRE(x == std::floor(x));
      const int bin = static_cast<int>(std::clamp(x - lo, 0.0, 199.0));
      counts[static_cast<std::size_t>(bin)] += 1.0;
    }
    // Expected counts per bin from the pmf; bins with expected < 5 pooled into their neighbour.
    double chi2 = 0.0, pooled_obs = 0.0, pooled_exp = 0.0;
    int dof = -1;
    for (int b = 0; b < 200; ++b) {
      const double k = lo + b;
      double p = std::exp(k * std::log(lambda) - lambda - std::lgamma(k + 1.0));
      if (b == 0) p = poisson_family::cdf(lo, lambda);
      if (b == 199) p = 1.0 - poisson_family::cdf(lo + 198.0, lambda);
      pooled_obs += counts[static_cast<std::size_t>(b)];
      pooled_exp += n * p;
      if (pooled_exp >= 5.0) {
        chi2 += (pooled_obs - pooled_exp) * (pooled_obs - pooled_exp) / pooled_exp;
        pooled_obs = pooled_exp = 0.0;
        ++dof;
      }
    }
    const double pvalue = boost::math::cdf(boost::math::complement(boost::math::chi_squared_distribution<>(dof), chi2));
    INFO("chi2 " << chi2 << " on " << dof << " dof, p " << pvalue);
    REQUIRE(pvalue > 1e-3);
  }
  CHECK_THROWS_AS(draw_poisson(g, -1.0), std::invalid_argument);
  CHECK_THROWS_AS(draw_poisson(g, std::nan("")), std::invalid_argument);
}

TEST_CASE("unbounded families: bad input", "[families][errors]") {
  CHECK_THROWS_AS(exponential_gamma_prior(0.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(poisson_gamma_prior(1.0, -1.0), std::invalid_argument);
  CHECK_THROWS_AS(normal_mean_prior(0.0, 0.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(normal_inverse_gamma_prior(0.0, 1.0, 1.0, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(exponential_gamma_prior(1.0, 1.0).update(Eigen::Matrix<double, 1, 1>(-1.0), 5.0), std::invalid_argument);
  CHECK_THROWS_AS(normal_inverse_gamma_prior(0.0, 1.0, 1.0, 1.0).update(Eigen::Vector2d(10.0, 1.0), 5.0), std::invalid_argument);
  // A region that holds no probability mass.
  CHECK_THROWS_AS(truncated_moments<exponential_rate_family>(1.0, -5.0, -1.0), std::domain_error);
  CHECK_THROWS_AS(truncated_moments<poisson_family>(1.0, 2.2, 2.8), std::domain_error);
  CHECK_THROWS_AS(truncated_moments<exponential_rate_family>(1.0, 3.0, 1.0), std::invalid_argument);
}
