// libFuzzer harness: mechanism construction and release with arbitrary doubles (NaN, infinities, -0.0, denormals, huge
// values), for laplace_mechanism, gaussian_mechanism (classic and analytic) and their log-likelihoods. Contract: a
// construction or release is refused with std::invalid_argument or std::domain_error, or it succeeds with a finite
// noise scale, a finite release and a log-likelihood that is not NaN.
#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <stdexcept>

#include "fuzz_support.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"

namespace {

template <class M>
void exercise(const M& m, privpost::fuzz::input& in) {
  const int k = 1 + in.byte() % 4;
  Eigen::VectorXd s(k), z(k);
  for (int j = 0; j < k; ++j) s(j) = in.real();
  for (int j = 0; j < k; ++j) z(j) = in.real();
  std::mt19937_64 g(in.byte());
  try {
    const Eigen::VectorXd r = m.release(s, g);
    if (!r.allFinite()) privpost::fuzz::violated("a release that is not finite");
  } catch (const std::invalid_argument&) {
  } catch (const std::domain_error&) {
  }
  try {
    if (std::isnan(m.log_likelihood(z, s))) privpost::fuzz::violated("a NaN log-likelihood");
  } catch (const std::invalid_argument&) {
  } catch (const std::domain_error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  privpost::fuzz::input in(data, size);
  const std::uint8_t which = in.byte() % 3;
  const double sensitivity = in.real(), epsilon = in.real(), delta = in.real();
  try {
    if (which == 0) {
      const privpost::laplace_mechanism m(sensitivity, epsilon);
      if (!(std::isfinite(m.scale()) && m.scale() > 0)) privpost::fuzz::violated("Laplace scale");
      exercise(m, in);
    } else {
      const auto m = which == 1 ? privpost::gaussian_mechanism::classic(sensitivity, epsilon, delta)
                                : privpost::gaussian_mechanism::analytic(sensitivity, epsilon, delta);
      if (!(std::isfinite(m.sigma()) && m.sigma() > 0)) privpost::fuzz::violated("Gaussian sigma");
      exercise(m, in);
    }
  } catch (const std::invalid_argument&) {
  } catch (const std::domain_error&) {
  }
  return 0;
}
