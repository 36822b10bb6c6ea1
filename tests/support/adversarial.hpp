// Test support for the adversarial tests: run a case that must either throw a documented exception
// (std::invalid_argument or std::domain_error, with a message) or finish with finite results, within 5 seconds.
#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <stdexcept>
#include <string>

namespace privpost::test {

/// How many cases gave finite results and how many were refused.
struct adversarial_tally {
  int finite = 0, refused = 0;
};

/// Runs body() (which REQUIREs finite results); a documented exception with a message counts as refused. Any other
/// exception fails the test, and so does a case over 5 seconds (a hang trips this before CTest's timeout).
template <class Body>
void run_adversarial(Body body, adversarial_tally& t) {
  const auto start = std::chrono::steady_clock::now();
  bool refused = false;
  try {
    body();
  } catch (const std::invalid_argument& e) {
    refused = true;
    CHECK(std::string(e.what()).size() > 10);
  } catch (const std::domain_error& e) {
    refused = true;
    CHECK(std::string(e.what()).size() > 10);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 5.0);
  (refused ? t.refused : t.finite) += 1;
}

}  // namespace privpost::test
