// privpost/core/math/log_gamma.hpp
// log_gamma: log Gamma(x) for x > 0, thread-safe (std::lgamma writes the global signgam and is not required to be
// reentrant; parallel chains call this), by Boost.Math's Lanczos approximation in double precision.
#pragma once

#include <boost/math/policies/policy.hpp>
#include <boost/math/special_functions/gamma.hpp>

namespace privpost {

namespace detail {
// double in, double arithmetic inside (Boost's default promotes to long double, about 2x slower, for no accuracy we use).
using log_gamma_policy = boost::math::policies::policy<boost::math::policies::promote_double<false>>;
}  // namespace detail

/// log Gamma(x) for x > 0 (x = k + 1 gives log k!).
inline double log_gamma(double x) { return boost::math::lgamma(x, detail::log_gamma_policy()); }

}  // namespace privpost
