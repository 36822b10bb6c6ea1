// privpost/mechanisms/reachable.hpp
// One rule, used by every sampler and by the tools, for released values that no release of the declared mechanism
// produces: a value more than max_noise_scales_outside noise scales outside the range the exact statistic can take.
// Far out there a sampler's arithmetic cannot represent the release: z - s rounds to z for every s, so the release
// carries no information and a chain returns its prior, or the projection onto the valid set pins the statistic to an
// end and the posterior is confident and wrong (a binomial count released as 1e20 under Gaussian noise gave a posterior
// mean of 0.22). Such a value is refused with a message naming it, never answered.
#pragma once

#include <cmath>
#include <concepts>
#include <limits>
#include <string>
#include <string_view>

#include "privpost/core/errors.hpp"

namespace privpost {

/// How many noise scales a released value may lie outside the range of its statistic. For Laplace noise of scale b an
/// honest release lands beyond 50 b with probability 0.5 e^-50 < 1e-22 per coordinate (the Gaussian and the lattice
/// mechanisms' tails are lighter still), so refusing such values costs an honest user nothing, while every sampler's
/// arithmetic is still exact well beyond it.
inline constexpr double max_noise_scales_outside = 50.0;

/// The noise scale of a mechanism for the rule above: its own noise_scale(), else the Laplace scale b (scale()), else
/// the Gaussian standard deviation (sigma()), else the square root of noise_variance(); +infinity (the rule is off) for
/// a mechanism that reports none of them.
template <class M>
double noise_scale(const M& m) {
  if constexpr (requires {
                  { m.noise_scale() } -> std::convertible_to<double>;
                })
    return static_cast<double>(m.noise_scale());
  else if constexpr (requires {
                       { m.scale() } -> std::convertible_to<double>;
                     })
    return static_cast<double>(m.scale());
  else if constexpr (requires {
                       { m.sigma() } -> std::convertible_to<double>;
                     })
    return static_cast<double>(m.sigma());
  else if constexpr (requires {
                       { m.noise_variance() } -> std::convertible_to<double>;
                     })
    return std::sqrt(static_cast<double>(m.noise_variance()));
  else
    return std::numeric_limits<double>::infinity();
}

/// Refuses a released value z (called `name` in the message) that lies more than max_noise_scales_outside times
/// `scale` outside [lo, hi], the range the exact statistic of n records can take (lo may be -infinity and hi
/// +infinity: no bound on that side). Throws std::invalid_argument naming the value, the range and the noise scale; a
/// NaN or infinite z is always refused.
inline void check_reachable(std::string_view function, std::string_view name, double z, double lo, double hi, double n,
                            double scale) {
  const double outside = z < lo ? lo - z : (z > hi ? z - hi : 0.0);
  if (std::isfinite(z) && outside <= max_noise_scales_outside * scale) return;
  throw std::invalid_argument(
      detail::message(function, name, detail::format_value(z),
                      "a value within " + detail::format_value(max_noise_scales_outside) + " noise scales (scale " +
                          detail::format_value(scale) + ") of [" + detail::format_value(lo) + ", " + detail::format_value(hi) +
                          "], the range of the statistic of n = " + detail::format_value(n) +
                          " records: farther out is no release of this mechanism (probability below 1e-21) and no "
                          "posterior is computed from it"));
}

}  // namespace privpost
