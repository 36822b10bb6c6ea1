// Checks that a sweep of every sampler allocates nothing on the heap (issue #3: "no heap allocation inside a sweep").
// This executable replaces the global operator new with a counting one; the count is read around 1000 sweeps.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <new>
#include <random>

#include "privpost/families/binomial.hpp"
#include "privpost/families/exponential.hpp"
#include "privpost/families/multinomial.hpp"
#include "privpost/families/normal.hpp"
#include "privpost/families/poisson.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/gibbs_ss.hpp"
#include "privpost/samplers/gibbs_ss_truncated.hpp"

namespace {
std::atomic<long> allocations{0};
}

void* operator new(std::size_t size) {
  ++allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

using namespace privpost;

namespace {
template <class Sampler>
long allocations_in_sweeps(Sampler& s, std::mt19937_64& g) {
  s.step(g);  // warm-up
  const long before = allocations.load();
  for (int i = 0; i < 1000; ++i) s.step(g);
  return allocations.load() - before;
}
}  // namespace

TEST_CASE("Gibbs-SS sweeps allocate nothing", "[allocation]") {
  std::mt19937_64 g(1);
  Eigen::VectorXd z1(1), z2(2);
  z1 << 310.0;
  z2 << 310.0, 420.0;
  gibbs_ss binomial(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 0.1), z1, 1000.0, g);
  CHECK(allocations_in_sweeps(binomial, g) == 0);
  gibbs_ss multinomial(dirichlet_prior<3>(Eigen::Vector3d::Ones()), gaussian_mechanism::analytic(1.5, 0.1, 1e-5), z2, 1000.0, g);
  CHECK(allocations_in_sweeps(multinomial, g) == 0);
}

TEST_CASE("truncated Gibbs-SS sweeps allocate nothing", "[allocation]") {
  std::mt19937_64 g(2);
  Eigen::VectorXd z1(1), z2(2);
  z1 << 450.0;
  gibbs_ss_truncated exponential(exponential_gamma_prior(20.0, 20.0), laplace_mechanism(4.0, 0.5), z1, 500.0, 0.0, 4.0, g);
  CHECK(allocations_in_sweeps(exponential, g) == 0);
  z1 << 2400.0;
  gibbs_ss_truncated poisson(poisson_gamma_prior(10.0, 2.0), laplace_mechanism(11.0, 0.5), z1, 500.0, 1.0, 11.0, g);
  CHECK(allocations_in_sweeps(poisson, g) == 0);
  z2 << 10.0, 480.0;
  gibbs_ss_truncated normal(normal_inverse_gamma_prior(0.0, 1.0, 10.0, 10.0), laplace_mechanism(12.0, 0.5), z2, 500.0, -3.0, 3.0,
                            g);
  CHECK(allocations_in_sweeps(normal, g) == 0);
}
