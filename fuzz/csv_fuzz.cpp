// libFuzzer harness: the CSV reader of the tools (examples/tools/csv.hpp), on the fuzzer's bytes as a file's text.
// Contract: the text is refused with std::invalid_argument, whose message stays short whatever the input (values are
// echoed cut), or it parses into distinct column names (unnamed ones aside) and rows of exactly as many fields; column "x" is
// read as finite decimal numbers or refused naming the line; never a crash, a NaN or an infinity.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "csv.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  constexpr std::size_t longest_message = 2000;  // 20 echoed names of at most ~60 characters, and the prose
  privpost::tools::csv_table table;
  try {
    table = privpost::tools::parse_csv(text, "fuzz.csv");
  } catch (const std::invalid_argument& e) {
    if (std::string(e.what()).size() > longest_message) privpost::fuzz::violated("an error message echoes too much");
    return 0;
  }
  for (std::size_t i = 0; i < table.names.size(); ++i) {
    if (table.names[i].empty()) continue;  // unnamed columns may repeat
    for (std::size_t k = 0; k < i; ++k)
      if (table.names[k] == table.names[i]) privpost::fuzz::violated("a duplicate column name");
  }
  for (const auto& row : table.rows)
    if (row.second.size() != table.names.size()) privpost::fuzz::violated("a row of the wrong length");
  try {
    for (const auto& [line, cell] : privpost::tools::column_cells(table, "x", "fuzz.csv"))
      if (!std::isfinite(privpost::tools::parse_csv_number(cell, line, "x"))) privpost::fuzz::violated("a non-finite value");
  } catch (const std::invalid_argument& e) {
    if (std::string(e.what()).size() > longest_message) privpost::fuzz::violated("an error message echoes too much");
  }
  return 0;
}
