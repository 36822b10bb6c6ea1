// symmetric_eigen (cyclic Jacobi) against Eigen's SelfAdjointEigenSolver and against matrices with known spectra, and
// the repairs built on it: robust_cholesky's jitter and eigenvalue clipping, project_psd's nearest PSD matrix.
#include <catch2/catch.hpp>

#include <Eigen/Eigenvalues>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

#include "privpost/core/linalg/robust_cholesky.hpp"
#include "privpost/core/linalg/symmetric_eigen.hpp"

using namespace privpost;

namespace {
Eigen::MatrixXd random_symmetric(Eigen::Index d, std::mt19937_64& g) {
  std::normal_distribution<double> z;
  Eigen::MatrixXd a(d, d);
  for (Eigen::Index j = 0; j < d; ++j)
    for (Eigen::Index i = j; i < d; ++i) a(i, j) = a(j, i) = z(g);
  return a;
}

// ||A V - V diag(values)|| and ||V^T V - I||, relative to ||A|| and absolute.
void check_decomposition(const Eigen::MatrixXd& a, const Eigen::VectorXd& values, const Eigen::MatrixXd& v) {
  const Eigen::Index d = a.rows();
  const double norm = std::max(a.norm(), std::numeric_limits<double>::min());
  CHECK((a * v - v * values.asDiagonal()).norm() <= 1e-13 * d * norm);
  CHECK((v.transpose() * v - Eigen::MatrixXd::Identity(d, d)).norm() <= 1e-13 * d);
  for (Eigen::Index i = 1; i < d; ++i) CHECK(values(i - 1) <= values(i));
}
}  // namespace

TEST_CASE("symmetric_eigen agrees with Eigen's SelfAdjointEigenSolver on random symmetric matrices", "[linalg]") {
  std::mt19937_64 g(11);
  for (Eigen::Index d : {1, 2, 3, 5, 8, 20, 60}) {
    for (int rep = 0; rep < 3; ++rep) {
      const Eigen::MatrixXd a = random_symmetric(d, g);
      Eigen::VectorXd values;
      Eigen::MatrixXd v;
      symmetric_eigen(a, values, &v);
      REQUIRE(values.size() == d);
      REQUIRE(v.rows() == d);
      REQUIRE(v.cols() == d);
      check_decomposition(a, values, v);
      const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> reference(a, Eigen::EigenvaluesOnly);
      CHECK((values - reference.eigenvalues()).cwiseAbs().maxCoeff() <= 1e-13 * d * a.norm());
      Eigen::VectorXd only;
      symmetric_eigen(a, only);  // values only: the same numbers
      CHECK(only == values);
    }
  }
}

TEST_CASE("symmetric_eigen on matrices with known spectra", "[linalg]") {
  Eigen::VectorXd values;
  Eigen::MatrixXd v;

  SECTION("diagonal: the entries sorted, the vectors a permutation") {
    Eigen::MatrixXd a = Eigen::Vector4d(3.0, -1.0, 2.0, 0.0).asDiagonal();
    symmetric_eigen(a, values, &v);
    CHECK(values == Eigen::Vector4d(-1.0, 0.0, 2.0, 3.0));
    CHECK(v.col(0) == Eigen::Vector4d(0.0, 1.0, 0.0, 0.0));
    CHECK(v.col(3) == Eigen::Vector4d(1.0, 0.0, 0.0, 0.0));
  }
  SECTION("2 x 2: eigenvalues 1 and 3, eigenvectors (1, -1) and (1, 1) over sqrt 2") {
    Eigen::Matrix2d a;
    a << 2.0, 1.0, 1.0, 2.0;
    symmetric_eigen(a, values, &v);
    CHECK(values(0) == Approx(1.0).epsilon(1e-15));
    CHECK(values(1) == Approx(3.0).epsilon(1e-15));
    CHECK(std::abs(v(0, 0) + v(1, 0)) <= 1e-15);
    CHECK(std::abs(v(0, 1) - v(1, 1)) <= 1e-15);
  }
  SECTION("a repeated eigenvalue: the identity times 5, and a rank-one matrix") {
    symmetric_eigen(5.0 * Eigen::MatrixXd::Identity(6, 6), values, &v);
    CHECK(values == Eigen::VectorXd::Constant(6, 5.0));
    const Eigen::VectorXd u = Eigen::VectorXd::LinSpaced(6, 1.0, 6.0);
    const Eigen::MatrixXd rank_one = u * u.transpose();
    symmetric_eigen(rank_one, values, &v);
    check_decomposition(rank_one, values, v);
    CHECK(values(5) == Approx(u.squaredNorm()).epsilon(1e-14));
    CHECK(values.head(5).cwiseAbs().maxCoeff() <= 1e-13 * u.squaredNorm());
  }
  SECTION("only the lower triangle is read") {
    Eigen::Matrix3d a;
    a << 4.0, std::numeric_limits<double>::quiet_NaN(), 1e300, 1.0, 3.0, -7.0, 0.5, 0.25, 2.0;
    Eigen::Matrix3d lower = a.triangularView<Eigen::Lower>();
    Eigen::Matrix3d full = lower + lower.transpose();
    full.diagonal() = lower.diagonal();
    symmetric_eigen(a, values, &v);
    check_decomposition(full, values, v);
  }
  SECTION("entries near the largest and the smallest double: no overflow, no underflow to zero") {
    std::mt19937_64 g(3);
    const Eigen::MatrixXd a = random_symmetric(5, g);
    for (double scale : {1e300, 1e-300}) {
      symmetric_eigen(scale * a, values, &v);
      Eigen::VectorXd reference;
      symmetric_eigen(a, reference);
      CHECK(values.allFinite());
      CHECK((values / scale - reference).cwiseAbs().maxCoeff() <= 1e-12);
    }
  }
  SECTION("the zero matrix and the empty matrix") {
    symmetric_eigen(Eigen::MatrixXd::Zero(3, 3), values, &v);
    CHECK(values == Eigen::Vector3d::Zero());
    CHECK(v == Eigen::Matrix3d::Identity());
    symmetric_eigen(Eigen::MatrixXd(0, 0), values, &v);
    CHECK(values.size() == 0);
    CHECK(v.size() == 0);
  }
}

TEST_CASE("symmetric_eigen refuses a matrix that is not square or not finite", "[linalg][errors]") {
  Eigen::VectorXd values;
  CHECK_THROWS_MATCHES(symmetric_eigen(Eigen::MatrixXd::Zero(2, 3), values), std::invalid_argument,
                       Catch::Matchers::Message("symmetric_eigen: the matrix is 2 x 3; accepted: a square matrix"));
  Eigen::Matrix2d a = Eigen::Matrix2d::Identity();
  a(1, 0) = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(symmetric_eigen(a, values), std::domain_error);
  CHECK_THROWS_WITH(symmetric_eigen(a, values), Catch::Contains("entry (1, 0) is inf; accepted: finite entries"));
}

TEST_CASE("robust_cholesky: plain, with jitter, with eigenvalue clipping; project_psd: the nearest PSD matrix", "[linalg]") {
  SECTION("positive definite: the plain factor, no repair") {
    Eigen::Matrix3d a;
    a << 4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0;
    Eigen::Matrix3d l;
    numerical_events events;
    robust_cholesky(a, l, events);
    CHECK((l * l.transpose() - a).norm() <= 1e-14);
    CHECK(events.jitter + events.psd_repairs == 0);
  }
  SECTION("singular positive semidefinite: jitter, counted") {
    const Eigen::VectorXd u = Eigen::VectorXd::LinSpaced(4, 1.0, 4.0);
    const Eigen::MatrixXd a = u * u.transpose();
    Eigen::MatrixXd l;
    numerical_events events;
    robust_cholesky(a, l, events);
    CHECK(events.jitter == 1);
    CHECK(events.psd_repairs == 0);
    CHECK((l * l.transpose() - a).norm() <= 1e-10);  // the first jitter, 1e-12 times the mean diagonal
  }
  SECTION("indefinite: eigenvalues clipped at 1e-4 times the mean diagonal, counted") {
    Eigen::Matrix3d a;
    a << 1.0, 2.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0, 3.0;  // eigenvalues -1, 3, 3
    Eigen::Matrix3d l;
    numerical_events events;
    robust_cholesky(a, l, events);
    CHECK(events.psd_repairs == 1);
    const Eigen::Matrix3d repaired = l * l.transpose();
    Eigen::VectorXd values;
    symmetric_eigen(repaired, values);
    CHECK(values(0) == Approx(1e-4 * a.diagonal().mean()).epsilon(1e-8));
    CHECK(values(1) == Approx(3.0).epsilon(1e-12));
    CHECK(values(2) == Approx(3.0).epsilon(1e-12));
  }
  SECTION("project_psd clips negative eigenvalues at 0 (Eigen's decomposition as the reference)") {
    std::mt19937_64 g(5);
    const Eigen::MatrixXd a = random_symmetric(6, g);
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(a);
    REQUIRE(eig.eigenvalues()(0) < 0.0);
    const Eigen::MatrixXd expected =
        eig.eigenvectors() * eig.eigenvalues().cwiseMax(0.0).asDiagonal() * eig.eigenvectors().transpose();
    Eigen::MatrixXd b = a;
    numerical_events events;
    CHECK(project_psd(b, events));
    CHECK(events.psd_repairs == 1);
    CHECK((b - expected).norm() <= 1e-12 * a.norm());
    Eigen::MatrixXd c = Eigen::MatrixXd::Identity(4, 4);
    CHECK_FALSE(project_psd(c, events));
    CHECK(events.psd_repairs == 1);
  }
  SECTION("a non-finite entry") {
    Eigen::Matrix2d a = Eigen::Matrix2d::Identity();
    a(0, 1) = std::numeric_limits<double>::quiet_NaN();
    Eigen::Matrix2d l;
    numerical_events events;
    CHECK_THROWS_MATCHES(robust_cholesky(a, l, events), std::domain_error,
                         Catch::Matchers::Message("robust_cholesky: matrix has a non-finite entry"));
  }
}
