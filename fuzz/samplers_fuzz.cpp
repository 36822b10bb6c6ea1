// libFuzzer harness: sampler construction and a few sweeps with arbitrary releases z, record counts n, prior parameters
// and epsilon, for every family sampler (gibbs_ss on binomial, multinomial and Poisson sums; gibbs_ss_exact,
// gibbs_ss_corrected, gibbs_ss_window, gibbs_ss_truncated, record_gibbs, the naive conjugate update). Contract: refused
// with std::invalid_argument or std::domain_error, or finite parameters after every sweep. record_gibbs holds n records,
// so it is driven only for n <= 1e4 (a larger n is valid and only slow).
#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <stdexcept>

#include "fuzz_support.hpp"
#include "privpost/families/binomial.hpp"
#include "privpost/families/exponential.hpp"
#include "privpost/families/multinomial.hpp"
#include "privpost/families/poisson.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/conjugate.hpp"
#include "privpost/samplers/gibbs_ss.hpp"
#include "privpost/samplers/gibbs_ss_corrected.hpp"
#include "privpost/samplers/gibbs_ss_exact.hpp"
#include "privpost/samplers/gibbs_ss_truncated.hpp"
#include "privpost/samplers/gibbs_ss_window.hpp"
#include "privpost/samplers/record_augmented.hpp"

namespace {

template <class Make>
void run(Make make) {
  std::mt19937_64 g(5);
  try {
    auto chain = make(g);
    for (int i = 0; i < 3; ++i) {
      chain.step(g);
      if (!chain.parameter_vector().allFinite()) privpost::fuzz::violated("a parameter that is not finite");
    }
  } catch (const std::invalid_argument&) {
  } catch (const std::domain_error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace privpost;
  fuzz::input in(data, size);
  const std::uint8_t which = in.byte() % 11;
  const double z0 = in.real(), z1 = in.real(), n = in.real(), a = in.real(), b = in.real(), epsilon = in.real();
  const bool small = n <= 1e4;
  Eigen::VectorXd z(1), z2(2);
  z << z0;
  z2 << z0, z1;
  try {
    const laplace_mechanism lap(1.0, epsilon);
    switch (which) {
      case 0:
        run([&](auto& g) { return gibbs_ss(beta_prior(a, b), lap, z, n, g); });
        break;
      case 1:
        run([&](auto& g) { return gibbs_ss_exact(beta_prior(a, b), lap, z, n, g); });
        break;
      case 2:
        run([&](auto& g) { return gibbs_ss_corrected(beta_prior(a, b), lap, z, n, g); });
        break;
      case 3:
        run([&](auto& g) { return gibbs_ss_window(poisson_gamma_prior(a, b), lap, z, n, g); });
        break;
      case 4:
        run([&](auto& g) { return gibbs_ss_corrected(poisson_gamma_prior(a, b), lap, z, n, g); });
        break;
      case 5:
        run([&](auto& g) { return gibbs_ss(poisson_gamma_prior(a, b), lap, z, n, g); });
        break;
      case 6:
        run([&](auto& g) { return gibbs_ss_truncated(poisson_gamma_prior(a, b), lap, z, n, 0.0, 10.0, g); });
        break;
      case 7:
        run([&](auto& g) { return gibbs_ss_truncated(exponential_gamma_prior(a, b), lap, z, n, 0.0, 8.0, g); });
        break;
      case 8:
        if (small) run([&](auto& g) { return record_gibbs(beta_prior(a, b), lap, z, n, g); });
        break;
      case 9:
        run([&](auto& g) { return gibbs_ss(dirichlet_prior<3>(Eigen::Vector3d(a, b, 1.0)), lap, z2, n, g); });
        break;
      default:
        run([&](auto& g) { return conjugate_sampler(beta_prior(a, b), z, n, g); });
        break;
    }
  } catch (const std::invalid_argument&) {
  } catch (const std::domain_error&) {
  }
  return 0;
}
