// A consumer's program: releases a noisy count with a seeded engine and checks the result is finite. Two headers are
// enough to check the target's include path, dependencies and flags in both modes (installed, from the source tree);
// that the install holds every header is checked file by file (cmake/consumer_test.cmake).
#include <privpost/mechanisms/laplace.hpp>
#include <privpost/version.hpp>

#include <cmath>
#include <iostream>
#include <random>

int main() {
  const privpost::laplace_mechanism mechanism(1.0, 0.5);
  std::mt19937_64 g(7);
  Eigen::VectorXd s(1);
  s << 42.0;
  const Eigen::VectorXd z = mechanism.release(s, g);
  std::cout << "privpost " << privpost::version_string << ": noisy count " << z(0) << '\n';
  return std::isfinite(z(0)) ? 0 : 1;
}
