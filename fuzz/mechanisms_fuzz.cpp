// libFuzzer harness: mechanism construction and release with arbitrary doubles (NaN, infinities, -0.0, denormals, huge
// values), for laplace_mechanism, gaussian_mechanism (classic and analytic), the lattice mechanisms
// discrete_laplace_mechanism and discrete_gaussian_mechanism (any granularity, exact or rounded statistics, any
// declared dimension) and their log-likelihoods. Contract: a construction or release is refused with
// std::invalid_argument or std::domain_error, or it succeeds with a finite noise scale, a finite release whose
// log-likelihood is finite, and a log-likelihood that is not NaN at arbitrary z.
#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <stdexcept>

#include "fuzz_support.hpp"
#include "privpost/mechanisms/discrete_gaussian.hpp"
#include "privpost/mechanisms/discrete_laplace.hpp"
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
    // the release's own likelihood exists (a lattice release is a lattice point)
    if (!std::isfinite(m.log_likelihood(r, s))) privpost::fuzz::violated("a release with a non-finite log-likelihood");
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
  const std::uint8_t which = in.byte() % 5;
  const double sensitivity = in.real(), epsilon = in.real(), delta = in.real();
  try {
    if (which >= 3) {
      privpost::lattice l;
      l.granularity = in.real();
      l.statistics = in.byte() % 2 == 0 ? privpost::lattice_statistic::exact : privpost::lattice_statistic::rounded;
      l.dimension = static_cast<Eigen::Index>(in.byte()) - 1;  // -1 .. 254: 0 and -1 must be refused
      if (which == 3) {
        const privpost::discrete_laplace_mechanism m(sensitivity, epsilon, l);
        if (!(std::isfinite(m.scale()) && m.scale() > 0 && m.lattice_scale() >= m.lattice_sensitivity() / epsilon))
          privpost::fuzz::violated("discrete Laplace scale");
        exercise(m, in);
      } else {
        const privpost::discrete_gaussian_mechanism m(sensitivity, epsilon, delta, l);
        if (!(std::isfinite(m.sigma()) && m.sigma() > 0 && m.zcdp_rho() > 0 &&
              m.zcdp_rho() + 2.0 * std::sqrt(m.zcdp_rho() * -std::log(delta)) <= epsilon * (1 + 1e-9)))
          privpost::fuzz::violated("discrete Gaussian calibration");
        exercise(m, in);
      }
    } else if (which == 0) {
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
