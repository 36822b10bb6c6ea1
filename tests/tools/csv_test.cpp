// The tools' CSV reader (examples/tools/csv.hpp): RFC 4180 quoting, R's and spreadsheets' forms, and the refusals that
// keep a release from reading a column other than the one its author meant.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>

#include "../../examples/tools/csv.hpp"

using privpost::tools::column_cells;
using privpost::tools::is_decimal_number;
using privpost::tools::parse_csv;
using privpost::tools::parse_csv_number;

namespace {
std::string refusal(const std::string& text) {
  try {
    parse_csv(text, "t.csv");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}
}  // namespace

TEST_CASE("csv: numbers are written as the shortest text that reads back to the same double", "[csv]") {
  auto text = [](double x) {
    std::ostringstream os;
    privpost::tools::write_csv_number(os, x);
    return os.str();
  };
  CHECK(text(0.1) == "0.1");
  CHECK(text(2.0) == "2");
  CHECK(text(-1.5e-7) == "-1.5e-07");
  for (double x :
       {1.0 / 3.0, -2.2250738585072014e-308, 4.9e-324, 1.7976931348623157e308, 123456.789, -0.0, 8.8817841970012523e-16}) {
    const std::string t = text(x);
    INFO(t);
    CHECK(t.size() <= 24);
    CHECK(std::strtod(t.c_str(), nullptr) == x);
    CHECK(std::signbit(std::strtod(t.c_str(), nullptr)) == std::signbit(x));
  }
}

TEST_CASE("csv: round_significant keeps that many significant digits and whole numbers whole", "[csv]") {
  using privpost::tools::round_significant;
  CHECK(round_significant(3.14159265, 3) == 3.14);
  CHECK(round_significant(-0.000123456, 2) == -0.00012);
  CHECK(round_significant(7.9996, 3) == 8.0);
  CHECK(round_significant(123456.7, 3) == 123000.0);
  CHECK(round_significant(1.0 / 3.0, 17) == 1.0 / 3.0);
  CHECK(round_significant(1.0 / 3.0, 0) == 1.0 / 3.0);
  CHECK(round_significant(42.0, 1) == 42.0);  // a count stays itself
  CHECK(round_significant(4.9e-324, 1) == 4.9e-324);
  CHECK(round_significant(std::numeric_limits<double>::infinity(), 2) == std::numeric_limits<double>::infinity());
  CHECK_THROWS_WITH(round_significant(1.5, 18), Catch::Contains("digits is 18; accepted: 0 to 17"));
  CHECK_THROWS_WITH(round_significant(1.5, -1), Catch::Contains("digits is -1; accepted: 0 to 17"));
}

TEST_CASE("csv: R's write.csv file (quoted names, row names, CRLF) is read as RFC 4180 says", "[csv]") {
  const auto t =
      parse_csv("\"\",\"x1\",\"label\"\r\n\"1\",2.5,\"a, \"\"quoted\"\" b\"\r\n\"2\",-3e2,\"two\nlines\"\r\n", "t.csv");
  REQUIRE(t.names == std::vector<std::string>{"", "x1", "label"});
  REQUIRE(t.rows.size() == 2);
  const auto x = column_cells(t, "x1", "t.csv");
  CHECK(x[0] == std::pair<std::size_t, std::string>{2, "2.5"});
  CHECK(x[1] == std::pair<std::size_t, std::string>{3, "-3e2"});
  const auto label = column_cells(t, "label", "t.csv");
  CHECK(label[0].second == "a, \"quoted\" b");
  CHECK(label[1].second == "two\nlines");
  // The unnamed row-name column can never be selected.
  CHECK_THROWS_WITH(column_cells(t, "", "t.csv"), Catch::Contains("has no column ''"));
}

TEST_CASE("csv: a UTF-8 byte-order mark is skipped, blank lines too, spaces around unquoted fields trimmed", "[csv]") {
  const auto t = parse_csv("\xEF\xBB\xBFx,y\n\n 1 , 2\n\n3,4", "t.csv");
  REQUIRE(t.names == std::vector<std::string>{"x", "y"});
  REQUIRE(t.rows.size() == 2);
  CHECK(column_cells(t, "x", "t.csv")[0] == std::pair<std::size_t, std::string>{3, "1"});
  CHECK(column_cells(t, "y", "t.csv")[1] == std::pair<std::size_t, std::string>{5, "4"});
}

TEST_CASE("csv: '#' lines before the header are comments; after it a '#' is data, refused as a number", "[csv]") {
  const auto t = parse_csv("# privpost-synthesize: set 1\r\n# release: r.json, x\n\"x\"\n1\n2\n", "t.csv");
  REQUIRE(t.names == std::vector<std::string>{"x"});
  REQUIRE(t.rows.size() == 2);
  CHECK(column_cells(t, "x", "t.csv")[0] == std::pair<std::size_t, std::string>{4, "1"});
  const auto late = parse_csv("x\n# not a comment\n", "t.csv");
  CHECK(column_cells(late, "x", "t.csv")[0].second == "# not a comment");
  CHECK_THROWS_AS(parse_csv("# only a comment\n", "t.csv"), std::invalid_argument);
}

TEST_CASE("csv: duplicate names, ragged rows and broken quoting are refused with the line", "[csv]") {
  CHECK_THAT(refusal("x,y,x\n1,2,3\n"),
             Catch::Contains("the column name 'x' is given twice (columns 1 and 3); accepted: distinct names"));
  CHECK_THAT(refusal("x,y\n1,2\n3\n"), Catch::Contains("line 3: 1 field(s); the header has 2"));
  CHECK_THAT(refusal("x,y\n1,2,3\n"), Catch::Contains("line 2: 3 field(s); the header has 2"));
  CHECK_THAT(refusal("x,y\n\"1,2\n"), Catch::Contains("line 2: a quoted field is never closed"));
  CHECK_THAT(refusal("x,y\n\"1\"2,3\n"), Catch::Contains("line 2: text after a closing quote"));
  CHECK_THAT(refusal("x,y\n1\"2,3\n"), Catch::Contains("line 2: a quote inside an unquoted field"));
  CHECK_THAT(refusal(""), Catch::Contains("is empty"));
  CHECK_THAT(refusal("x,y\n\n"), Catch::Contains("has no data rows"));
}

TEST_CASE("csv: numbers are decimal only", "[csv]") {
  for (const char* good : {"0", "-1", "+2.5", ".5", "5.", "1e3", "-1.25E-7", "007"}) {
    INFO(good);
    CHECK(is_decimal_number(good));
  }
  for (const char* bad : {"", "0x10", "0X1p3", "inf", "-Infinity", "nan", "NA", "1e", "1e+", ".", "-", "1,5", " 1", "1 ", "1d3",
                          "e5", "--1", "1.2.3"}) {
    INFO(bad);
    CHECK_FALSE(is_decimal_number(bad));
  }
  CHECK(parse_csv_number("0.25", 7, "x") == 0.25);
  CHECK_THROWS_WITH(parse_csv_number("0x10", 7, "x"), "CSV line 7: '0x10' in column 'x' is not a finite decimal number");
  CHECK_THROWS_WITH(parse_csv_number("1e999", 7, "x"), Catch::Contains("is not a finite decimal number"));
}

TEST_CASE("csv: echoed values are cut, a missing column lists the columns", "[csv]") {
  const std::string text = "x\n" + std::string(200000, 'a') + "\n";
  const auto t = parse_csv(text, "t.csv");
  try {
    parse_csv_number(t.rows[0].second[0], 2, "x");
    FAIL("a 200000-character cell was read as a number");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).size() < 200);
    CHECK_THAT(e.what(), Catch::Contains("... (200000 characters)"));
  }
  CHECK_THROWS_WITH(column_cells(parse_csv("a,b,c\n1,2,3\n", "t.csv"), "x1", "t.csv"),
                    "CSV file 't.csv' has no column 'x1'; its columns: a, b, c");
}
