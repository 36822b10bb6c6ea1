// privpost/core/concepts.hpp
// The concepts every piece of privpost is written against, and the list of customisation points a user
// may provide (DESIGN.md "Concepts"). Mechanisms opt in explicitly: having a release() member is not a promise of privacy.
#pragma once

#include <concepts>
#include <random>
#include <type_traits>

namespace privpost {

/// Any uniform random bit generator (std::mt19937_64, privpost::os_random_engine, ...).
template <class G>
concept random_engine = std::uniform_random_bit_generator<std::remove_cvref_t<G>>;

/// Opt-in tag: a type that declares `using mechanism_category = privpost::mechanism_tag;` promises that its
/// release() satisfies the privacy budget it reports.
struct mechanism_tag {};

/// (epsilon, delta) of a release; delta = 0 for pure epsilon-DP.
struct privacy_budget {
  double epsilon = 0.0;
  double delta = 0.0;
  friend bool operator==(const privacy_budget&, const privacy_budget&) = default;
};

namespace detail {
template <class M>
concept opted_in_mechanism = requires { typename M::mechanism_category; } &&
                             std::same_as<typename M::mechanism_category, mechanism_tag>;
}  // namespace detail

/// A release mechanism: z = release(s, g) adds noise to a vector of statistics; log_likelihood(z, s) is
/// log p(z | s); budget() reports its privacy guarantee. Requires the explicit opt-in tag.
template <class M>
concept release_mechanism =
    detail::opted_in_mechanism<M> &&
    requires(const M& m, const typename M::vector_type& s, std::mt19937_64& g) {
      typename M::vector_type;
      { m.release(s, g) } -> std::same_as<typename M::vector_type>;
      { m.log_likelihood(s, s) } -> std::convertible_to<double>;
      { m.budget() } -> std::same_as<privacy_budget>;
    };

/// A mechanism whose noise is a Gaussian scale mixture: z | s, w ~ N(s, diag(w)). It can draw w from its prior
/// and redraw one coordinate's variance given the residual z_j - s_j (DESIGN.md "The key trick").
/// `fixed_variance` is true when w is a constant (Gaussian noise), so samplers may skip the redraw.
template <class M>
concept scale_mixture_noise = release_mechanism<M> && requires(const M& m, double residual, std::mt19937_64& g) {
  { m.draw_variance(g) } -> std::convertible_to<double>;
  { m.redraw_variance(residual, g) } -> std::convertible_to<double>;
  { M::fixed_variance } -> std::convertible_to<bool>;
};

}  // namespace privpost
