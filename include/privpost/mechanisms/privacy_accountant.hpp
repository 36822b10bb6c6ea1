// privpost/mechanisms/privacy_accountant.hpp
// privacy_accountant: the privacy budget ledger of one data set. Every release is charged to it before any noise is
// drawn; a charge that would take the composed guarantee past the data set's total (epsilon, delta) throws
// budget_exceeded and records nothing. Two composition rules, each a valid bound, and a charge fits when either does:
//   - basic composition (Dwork & Roth 2014, Thm. 3.16): the releases are (sum epsilon_i, sum delta_i)-DP;
//   - zero-concentrated DP (Bun & Steinke 2016): mechanism i is rho_i-zCDP (Gaussian: D^2 / (2 sigma^2), Prop. 1.6;
//     pure epsilon-DP: epsilon^2 / 2, Prop. 1.4), the releases are (sum rho_i)-zCDP (Lemma 2.3), hence
//     (rho + 2 sqrt(rho ln(1 / delta)), delta)-DP for every delta > 0 (Prop. 1.3), used at the total's delta.
// zCDP is what makes many Gaussian releases affordable: k releases at rho each cost about sqrt(k) times one release's
// epsilon instead of k times. A release with delta > 0 and no zCDP view (privpost::zcdp_rho = infinity) leaves basic
// composition as the only rule from then on.
//
//     privacy_accountant ledger({1.0, 1e-6});           // the data set's total budget
//     const auto z = ledger.release(laplace_mechanism(1.0, 0.3), s, "count");  // charged, then noise from the CSPRNG
//     ledger.charge(gaussian_mechanism::analytic(1.0, 0.5, 1e-7), "mean");     // charged only (noise drawn elsewhere)
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"

namespace privpost {

/// Thrown when a charge would exceed the total budget; nothing was recorded and no noise was drawn.
class budget_exceeded : public std::domain_error {
 public:
  using std::domain_error::domain_error;
};

/// One charge: what was released (a label of the caller's choosing), its (epsilon, delta) and its zCDP parameter rho
/// (+infinity: no zCDP view).
struct ledger_entry {
  /// What was released, in the caller's words.
  std::string label;
  /// Its (epsilon, delta).
  privacy_budget budget;
  /// Its zCDP parameter rho (+infinity: no zCDP view).
  double rho = 0.0;
};

/// The ledger of one data set: a total (epsilon, delta), the entries charged so far, and the composed spend.
class privacy_accountant {
 public:
  /// Relative slack of the comparisons with the total, so that a budget split into thirds (0.1 + 0.1 + 0.1 against
  /// 0.3) fits despite rounding: an overspend of at most 1e-12 relative, far below any meaningful epsilon.
  static constexpr double rounding_slack = 1e-12;

  /// total: epsilon finite and > 0, delta in [0, 1). std::invalid_argument otherwise (NaN included).
  explicit privacy_accountant(privacy_budget total) : total_(total) {
    constexpr const char* f = "privacy_accountant";
    if (!(std::isfinite(total.epsilon) && total.epsilon > 0.0))
      throw_invalid(f, "total epsilon", total.epsilon, "a finite number > 0");
    check_delta(f, total.delta, true);
  }

  /// Charges mechanism m's budget and zCDP view (privpost::zcdp_rho) under label. budget_exceeded (naming the request,
  /// the spend so far and the total) when neither composition rule keeps the total; nothing is recorded then.
  template <release_mechanism M>
  const ledger_entry& charge(const M& m, std::string label) {
    return charge(ledger_entry{std::move(label), m.budget(), privpost::zcdp_rho(m)});
  }

  /// Charges an entry (a ledger read back from a file, or a release made elsewhere). std::invalid_argument for an
  /// epsilon that is not finite and >= 0, a delta outside [0, 1) or a rho that is NaN or negative; budget_exceeded as
  /// above.
  const ledger_entry& charge(ledger_entry entry) {
    constexpr const char* f = "privacy_accountant::charge";
    if (!(std::isfinite(entry.budget.epsilon) && entry.budget.epsilon >= 0.0))
      throw_invalid(f, "epsilon of '" + entry.label + "'", entry.budget.epsilon, "a finite number >= 0");
    check_delta(f, entry.budget.delta, true);
    if (!(entry.rho >= 0.0)) throw_invalid(f, "rho of '" + entry.label + "'", entry.rho, "a number >= 0 or +infinity");
    if (!fits(entry)) {
      const privacy_budget after = spent_with(entry);
      throw budget_exceeded("privacy_accountant: '" + entry.label + "' asks for (epsilon " + short_value(entry.budget.epsilon) +
                            ", delta " + short_value(entry.budget.delta) + "); spent so far (epsilon " +
                            short_value(spent().epsilon) + ", delta " + short_value(spent().delta) + ") of the total (epsilon " +
                            short_value(total_.epsilon) + ", delta " + short_value(total_.delta) +
                            "); with it the spend would be (epsilon " + short_value(after.epsilon) + ", delta " +
                            short_value(after.delta) + "): refused before any noise was drawn");
    }
    entries_.push_back(std::move(entry));
    basic_.epsilon += entries_.back().budget.epsilon;
    basic_.delta += entries_.back().budget.delta;
    rho_ += entries_.back().rho;
    return entries_.back();
  }

  /// Whether charging entry would keep the total (by basic composition or by zCDP).
  bool fits(const ledger_entry& entry) const {
    const privacy_budget after = spent_with(entry);
    return after.epsilon <= total_.epsilon * (1.0 + rounding_slack) && after.delta <= total_.delta * (1.0 + rounding_slack);
  }

  /// Charges m under label, then releases s with noise from the operating system's CSPRNG (m.release(s)). The charge
  /// comes first: a refused release draws no noise.
  template <release_mechanism M, class Derived>
  auto release(const M& m, const Eigen::MatrixBase<Derived>& s, std::string label) {
    check_finite("privacy_accountant::release", "s", s);
    charge(m, std::move(label));
    return m.release(s);
  }
  /// The same with noise from engine g (simulation studies and tests; real releases use the CSPRNG overload).
  template <release_mechanism M, class Derived, random_engine G>
  auto release(const M& m, const Eigen::MatrixBase<Derived>& s, std::string label, G& g) {
    check_finite("privacy_accountant::release", "s", s);
    charge(m, std::move(label));
    return m.release(s, g);
  }

  /// The total budget of the data set.
  privacy_budget total() const noexcept { return total_; }
  /// The composed guarantee of every charge so far: the tighter valid one of basic composition and zCDP at the total's
  /// delta (see spent_with).
  privacy_budget spent() const { return compose(basic_, rho_); }
  /// (sum epsilon_i, sum delta_i).
  privacy_budget spent_basic() const noexcept { return basic_; }
  /// sum rho_i (+infinity when an entry has no zCDP view).
  double spent_rho() const noexcept { return rho_; }
  /// The entries in the order charged.
  const std::vector<ledger_entry>& entries() const noexcept { return entries_; }

  /// The zCDP to (epsilon, delta) conversion of Bun & Steinke 2016, Prop. 1.3: rho + 2 sqrt(rho ln(1 / delta)).
  /// std::invalid_argument for rho < 0 or NaN, or delta outside (0, 1); +infinity for rho = +infinity.
  static double zcdp_epsilon(double rho, double delta) {
    if (!(rho >= 0.0)) throw_invalid("privacy_accountant::zcdp_epsilon", "rho", rho, "a number >= 0");
    check_delta("privacy_accountant::zcdp_epsilon", delta, false);
    if (std::isinf(rho)) return rho;
    return rho + 2.0 * std::sqrt(rho * std::log(1.0 / delta));
  }

  /// The composed guarantee if entry were charged next: basic composition (sum epsilon, sum delta), or, when the total
  /// has delta > 0 and every entry a zCDP view, (zcdp_epsilon(sum rho, total delta), total delta) if its epsilon is
  /// smaller or basic composition's delta is over the total.
  privacy_budget spent_with(const ledger_entry& entry) const {
    return compose({basic_.epsilon + entry.budget.epsilon, basic_.delta + entry.budget.delta}, rho_ + entry.rho);
  }

 private:
  // The zCDP guarantee, when there is one, has the total's delta; it is taken when basic composition's delta exceeds
  // the total or its epsilon is larger, so that fits() holds exactly when either rule keeps the total.
  privacy_budget compose(privacy_budget basic, double rho) const {
    if (total_.delta > 0.0 && std::isfinite(rho)) {
      const double e = zcdp_epsilon(rho, total_.delta);
      if (e < basic.epsilon || basic.delta > total_.delta * (1.0 + rounding_slack)) return {e, total_.delta};
    }
    return basic;
  }

  // 12 significant digits: enough to tell budgets apart, short enough to read (0.1, not 0.10000000000000001).
  static std::string short_value(double x) {
    std::ostringstream os;
    os.precision(12);
    os << x;
    return os.str();
  }

  privacy_budget total_;
  std::vector<ledger_entry> entries_;
  privacy_budget basic_{0.0, 0.0};
  double rho_ = 0.0;
};

}  // namespace privpost
