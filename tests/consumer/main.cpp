// A consumer's program: releases a noisy count with a seeded engine and checks the result is finite.
// Installed (find_package): the umbrella header, so that every public header must have been installed. In the source
// tree (add_subdirectory), where the same headers compiled in the installed build, one header is enough to check the
// target's include path and flags, at a tenth of the umbrella's compile time.
#ifdef PRIVPOST_CONSUMER_ONE_HEADER
#include <privpost/mechanisms/laplace.hpp>
#include <privpost/version.hpp>
#else
#include <privpost/privpost.hpp>
#endif

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
