// Tests of privpost/core/errors.hpp: messages name the function, the argument, its value and the accepted range;
// -0.0, NaN and infinities are rejected where a positive finite number is required.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

#include "privpost/core/errors.hpp"
#include "privpost/version.hpp"

using namespace privpost;

namespace {
std::string message_of(auto&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}
}  // namespace

TEST_CASE("check_positive_finite names the value and the accepted range", "[errors]") {
  const std::string m = message_of([] { check_positive_finite("f", "epsilon", -2.5); });
  CHECK(m == "f: epsilon is -2.5; accepted: a finite number > 0");
  CHECK(message_of([] { check_positive_finite("f", "x", -0.0); }).find("-0.0") != std::string::npos);
  CHECK_THROWS_AS(check_positive_finite("f", "x", std::nan("")), std::invalid_argument);
  CHECK_THROWS_AS(check_positive_finite("f", "x", std::numeric_limits<double>::infinity()), std::invalid_argument);
  CHECK_THROWS_AS(check_positive_finite("f", "x", 0.0), std::invalid_argument);
  CHECK_NOTHROW(check_positive_finite("f", "x", 1e-300));
}

TEST_CASE("other checks", "[errors]") {
  CHECK_THROWS_AS(check_finite("f", "x", -std::numeric_limits<double>::infinity()), std::invalid_argument);
  CHECK_NOTHROW(check_nonnegative_finite("f", "x", 0.0));
  CHECK_THROWS_AS(check_nonnegative_finite("f", "x", -1e-300), std::invalid_argument);
  CHECK_THROWS_AS(check_bounded("f", "p", 1.5, 0.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(check_bounded("f", "p", std::nan(""), 0.0, 1.0), std::invalid_argument);
  CHECK(message_of([] { check_size_match("f", "z", 3, "s", 2); }) == "f: z has size 3 but s has size 2; accepted: equal sizes");
  CHECK_THROWS_AS(check_interval("f", "bounds", 2.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(check_interval("f", "bounds", std::nan(""), 1.0), std::invalid_argument);
  CHECK_THROWS_AS(throw_domain("f", "x", 1.0, "y"), std::domain_error);
}

TEST_CASE("vector and matrix checks name the offending entry", "[errors]") {
  Eigen::Vector3d v(1.0, std::nan(""), 2.0);
  CHECK(message_of([&] { check_finite("f", "z", v); }) == "f: z[1] is nan; accepted: a finite number");
  Eigen::Matrix2d m;
  m << 1.0, 0.0, std::numeric_limits<double>::infinity(), 1.0;
  CHECK(message_of([&] { check_finite("f", "S", m); }) == "f: S(1, 0) is inf; accepted: a finite number");
  CHECK_NOTHROW(check_finite("f", "z", Eigen::Vector3d::Zero()));
  CHECK_THROWS_AS(check_record_count("f", 0.0), std::invalid_argument);
  CHECK_THROWS_AS(check_record_count("f", std::nan("")), std::invalid_argument);
  CHECK_NOTHROW(check_record_count("f", 0.5));
  Eigen::Matrix2d spd;
  spd << 2.0, 0.5, 0.5, 1.0;
  CHECK_NOTHROW(check_symmetric_positive_definite("f", "L", spd));
  Eigen::Matrix2d asym = spd;
  asym(0, 1) = 0.6;
  CHECK_THROWS_WITH(check_symmetric_positive_definite("f", "L", asym), Catch::Contains("asymmetry"));
  Eigen::Matrix2d indefinite;
  indefinite << 1.0, 2.0, 2.0, 1.0;
  CHECK_THROWS_WITH(check_symmetric_positive_definite("f", "L", indefinite), Catch::Contains("L Cholesky pivot 1 is -3"));
  CHECK_THROWS_AS(check_symmetric_positive_definite("f", "L", Eigen::MatrixXd::Zero(2, 3)), std::invalid_argument);
  CHECK_THROWS_AS(check_symmetric_positive_definite("f", "L", m), std::invalid_argument);
}

TEST_CASE("the header version matches the CMake project version", "[version]") {
  CHECK(std::string(privpost::version_string) == PRIVPOST_PROJECT_VERSION);
}
