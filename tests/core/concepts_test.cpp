// Tests of privpost/core/concepts.hpp: known-good types satisfy each concept, known-bad ones do not; in particular a
// type with release() but without the opt-in tag is not a release mechanism (DESIGN.md, "explicit opt-in").
#include <catch2/catch.hpp>

#include <Eigen/Core>
#include <random>

#include "privpost/core/concepts.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"

using namespace privpost;

namespace {
// Looks like a mechanism but makes no promise.
struct lookalike {
  using vector_type = Eigen::VectorXd;
  template <class G>
  vector_type release(const vector_type& s, G&) const {
    return s;
  }
  double log_likelihood(const vector_type&, const vector_type&) const { return 0.0; }
  privacy_budget budget() const { return {1.0, 0.0}; }
};
struct opted_in_lookalike : lookalike {
  using mechanism_category = mechanism_tag;
};
}  // namespace

static_assert(random_engine<std::mt19937_64>);
static_assert(random_engine<std::mt19937&>);
static_assert(!random_engine<int>);
static_assert(release_mechanism<laplace_mechanism>);
static_assert(release_mechanism<gaussian_mechanism>);
static_assert(scale_mixture_noise<laplace_mechanism>);
static_assert(scale_mixture_noise<gaussian_mechanism>);
static_assert(!release_mechanism<lookalike>);
static_assert(release_mechanism<opted_in_lookalike>);
static_assert(!scale_mixture_noise<opted_in_lookalike>);
static_assert(!release_mechanism<int>);

TEST_CASE("concept checks compile", "[concepts]") { SUCCEED("static_asserts above"); }
