// Which options a tool's run uses, stated once per tool as a table (release_tool.hpp, calibrate.hpp). An option the
// chosen model and run kind do not use is refused before anything is read, charged or run: ignored, it would make a
// run nobody asked for (--cutoffs without --partitions once made, and charged, an ordinary release). `TOOL
// --option-uses` prints every (run, unused option) pair from the table, so that the refusal test is generated from it
// (cmake/option_uses_test.cmake).
#pragma once

#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models.hpp"

namespace privpost::tools {

/// One option of a tool: its flag, a value it accepts (the generated refusal test passes it; empty for a flag), what it
/// applies to (for the refusal's message) and the rule, a predicate of the run's Kind (the model and run kind, decided
/// from the command line alone).
template <class Kind>
struct option_use {
  std::string_view flag;
  std::string_view example;
  std::string applies_to;
  bool (*applies)(const Kind&);
};

/// The row of an option that the models Selects chooses use (Kind::model: the run's row of the model table): its words
/// are those models' names as the table has them (models_where), between prefix and suffix, so that a model added to
/// the table is named wherever its rule takes it.
template <class Kind, bool (*Selects)(const model_row&)>
option_use<Kind> for_models(std::string_view flag, std::string_view example, std::string_view prefix = "",
                            std::string_view suffix = "") {
  return {flag, example, std::string(prefix) + models_where(Selects) + std::string(suffix),
          [](const Kind& k) { return Selects(*k.model); }};
}

namespace option_detail {
inline std::vector<std::string> flags(const CLI::App& app, bool given_only) {
  std::vector<std::string> out;
  for (const CLI::Option* opt : app.get_options())
    if ((!given_only || opt->count() > 0) && !opt->get_lnames().empty() && opt->get_lnames().front() != "help")
      out.push_back("--" + opt->get_lnames().front());
  return out;
}

template <class Kind, std::size_t N>
const option_use<Kind>* find(const std::array<option_use<Kind>, N>& table, std::string_view flag) {
  for (const auto& u : table)
    if (u.flag == flag) return &u;
  return nullptr;
}
}  // namespace option_detail

/// std::invalid_argument naming the first option given on app's command line that a run of kind k does not use
/// (`run` describes the run, e.g. "this release (the binomial model)"; `nothing` what has not happened yet, e.g.
/// "nothing was read or charged"); std::logic_error for an option without a row.
template <class Kind, std::size_t N>
void refuse_unused_options(const CLI::App& app, const std::array<option_use<Kind>, N>& table, const Kind& k,
                           const std::string& run, const std::string& nothing) {
  for (const auto& flag : option_detail::flags(app, true)) {
    const option_use<Kind>* u = option_detail::find(table, flag);
    if (u == nullptr) throw std::logic_error(flag + " has no row in the tool's option table");
    if (!u->applies(k))
      throw std::invalid_argument(flag + " does not apply to " + run + ": it applies to " + u->applies_to + "; " + nothing);
  }
}

/// `TOOL --option-uses`: checks that the table has one row per option of app and no other (exit status 1 otherwise),
/// then prints, for every option and every run of `runs` (arguments that select the run, and its Kind) that does not
/// use it, the arguments that give it to that run, one case per line.
template <class Kind, std::size_t N>
int print_option_uses(const CLI::App& app, const std::array<option_use<Kind>, N>& table,
                      const std::vector<std::pair<std::string, Kind>>& runs) {
  const std::vector<std::string> flags = option_detail::flags(app, false);
  for (const auto& flag : flags)
    if (option_detail::find(table, flag) == nullptr) {
      std::cerr << "option " << flag << " has no row in the tool's option table\n";
      return 1;
    }
  for (const auto& u : table)
    if (std::find(flags.begin(), flags.end(), u.flag) == flags.end()) {
      std::cerr << "the tool's option table has a row for " << u.flag << ", which is no option\n";
      return 1;
    }
  for (const auto& u : table)
    for (const auto& [args, k] : runs)
      if (!u.applies(k)) std::cout << args << ' ' << u.flag << (u.example.empty() ? "" : " ") << u.example << '\n';
  return 0;
}

}  // namespace privpost::tools
