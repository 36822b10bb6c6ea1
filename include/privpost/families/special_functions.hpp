// privpost/families/special_functions.hpp
// Log-space special functions that work on doubles and on the autodiff variables of Lemma 1, for users who write the
// log_region_probability of their own family: log(1 - e^u) and log(Phi(b) - Phi(a)), exact in the far tails.
#pragma once

#include "privpost/families/detail/jet.hpp"

namespace privpost {

/// log(1 - e^u) for u < 0 (double or autodiff variable).
using detail::log1mexp;
/// log(Phi(b) - Phi(a)) for standardised ends a <= b; pass a_infinite / b_infinite for -inf / +inf ends.
using detail::log_normal_interval;
/// The plain value of a double or of an autodiff variable.
using detail::value_of;

}  // namespace privpost
