// privpost/mechanisms/csprng_release.hpp
// The release with noise from the operating system's CSPRNG, the default for a real release, written once for every
// mechanism whose release(s, g) takes an engine: no mechanism can default to a seeded engine by a slip of its own.
#pragma once

#include <Eigen/Core>

#include "privpost/core/concepts.hpp"
#include "privpost/core/random/os_random_engine.hpp"

namespace privpost::detail {

/// Base of a mechanism M on vectors of doubles with release(s, g): declares M a release mechanism (mechanism_category,
/// vector_type) and adds release(s), the same with noise from os_random_engine. M brings it into scope beside its own
/// overload (using detail::csprng_release<M>::release).
template <class M>
struct csprng_release {
  /// Marks a release mechanism.
  using mechanism_category = mechanism_tag;
  /// Type of the statistic and of the release.
  using vector_type = Eigen::VectorXd;
  /// z = release(s, g) with g the operating system's CSPRNG.
  template <class Derived>
  typename Derived::PlainObject release(const Eigen::MatrixBase<Derived>& s) const {
    os_random_engine g;
    return static_cast<const M&>(*this).release(s, g);
  }
};

}  // namespace privpost::detail
