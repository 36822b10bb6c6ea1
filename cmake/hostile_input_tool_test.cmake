# Hostile and careless input to privpost-release and privpost-infer, end to end, for CTest:
#   cmake -DRELEASE=... -DINFER=... -DDATA=<tests/tools> -DWORKDIR=... -P hostile_input_tool_test.cmake
#   1. a release privpost-infer could not analyse (--categories 6) is refused before the ledger is touched;
#   2. CSV as R's write.csv writes it (quoted names, a row-name column, CRLF) and with a byte-order mark is read; a
#      duplicate column name and a hexadecimal number are refused;
#   3. an edge declared in reverse (--edges b:a) is stored as the table is laid out ([0, 1], rows a's levels): cell
#      (a, c) of edge (u, v) is at a K_v + c, as the record's description says;
#   4. a record whose released value no honest release produces (a binomial count of 1e20) is refused by
#      privpost-infer with the value named, not answered with a confident posterior;
#   5. an error inside the library (a prior whose draws overflow) names the user's inputs first, then the detail;
#   6. a pairwise-tables record with a lattice mechanism (which privpost-release does not write, another tool could) is
#      refused by privpost-infer, with --shift-moves too: the shift move's target is the continuous noise law.
include("${CMAKE_CURRENT_LIST_DIR}/tool_test_support.cmake")
privpost_require_defined(RELEASE INFER DATA WORKDIR)
file(REMOVE_RECURSE "${WORKDIR}")
file(MAKE_DIRECTORY "${WORKDIR}")
function(run expect regex)
  privpost_expect_run("${WORKDIR}" "${expect}" "${regex}" ${ARGN})
endfunction()

# 1.
file(WRITE "${WORKDIR}/cat.csv" "k\n0\n1\n5\n")
run(failure "--categories is 6; accepted: an integer from 2 to 5"
    ${RELEASE} --input cat.csv --column k --model multinomial --categories 6 --epsilon 1 --ledger cat_ledger.json --budget 2)
if(EXISTS "${WORKDIR}/cat_ledger.json")
  message(FATAL_ERROR "a release refused for its --categories wrote a ledger")
endif()
run(failure "--categories is 2147483647; accepted: an integer from 2 to 5"
    ${RELEASE} --input cat.csv --column k --model multinomial --categories 2147483647 --epsilon 1)

# 2.
file(WRITE "${WORKDIR}/r.csv" "\"\",\"id\",\"sick\"\r\n\"1\",1,1\r\n\"2\",2,0\r\n\"3\",3,1\r\n")
run(success "released 1 statistic\\(s\\) of n = 3 records" ${RELEASE} --input r.csv --column sick --model binomial --epsilon 1 --output r.json)
execute_process(COMMAND printf "\\357\\273\\277sick,id\\n1,1\\n0,2\\n" OUTPUT_FILE "${WORKDIR}/bom.csv")  # UTF-8 BOM
run(success "released 1 statistic\\(s\\) of n = 2 records" ${RELEASE} --input bom.csv --column sick --model binomial --epsilon 1 --output bom.json)
file(WRITE "${WORKDIR}/dup.csv" "sick,sick\n1,0\n")
run(failure "the column name 'sick' is given twice \\(columns 1 and 2\\)"
    ${RELEASE} --input dup.csv --column sick --model binomial --epsilon 1 --output dup.json)
file(WRITE "${WORKDIR}/hex.csv" "wait\n1.5\n0x10\n")
run(failure "CSV line 3: '0x10' in column 'wait' is not a finite decimal number"
    ${RELEASE} --input hex.csv --column wait --model exponential --lower 0 --upper 20 --epsilon 1 --output hex.json)

# 3. Columns a (levels x, y) and b (p, q, r): one record (x, q), five (y, p). With a's levels as rows the table of the
#    edge is [x p, x q, x r, y p, y q, y r] = [0, 1, 0, 5, 0, 0]; b's levels as rows would put the 1 at index 2 and
#    the 5 at index 1. Epsilon 1000 makes the noise (scale 0.002) negligible.
file(WRITE "${WORKDIR}/ab.csv" "a,b\nx,q\ny,p\ny,p\ny,p\ny,p\ny,p\n")
run(success "released 6 statistic"
    ${RELEASE} --input ab.csv --model pairwise-tables --columns a,b --levels-of a=x/y --levels-of b=p/q/r --edges b:a
    --epsilon 1000 --output ab.json)
file(READ "${WORKDIR}/ab.json" record)
string(JSON u GET "${record}" graph edges 0 0)
string(JSON v GET "${record}" graph edges 0 1)
if(NOT u EQUAL 0 OR NOT v EQUAL 1)
  message(FATAL_ERROR "the edge declared b:a is stored as [${u}, ${v}]; expected [0, 1] (a's levels as rows)")
endif()
foreach(pair "1;1" "3;5" "2;0")  # index; count (if() compares numbers as doubles)
  list(GET pair 0 index)
  list(GET pair 1 count)
  string(JSON z GET "${record}" noisy_statistics ${index})
  math(EXPR lo "${count} * 10 - 5")
  math(EXPR hi "${count} * 10 + 5")
  if(NOT z GREATER "${lo}e-1" OR NOT z LESS "${hi}e-1")
    message(FATAL_ERROR "cell ${index} of the edge table is ${z}; expected about ${count} (a's levels as rows)")
  endif()
endforeach()
run(success "" ${INFER} ab.json --point-estimate)

# 4.
file(WRITE "${WORKDIR}/huge.json" "{\"format\": \"privpost-release-1\", \"model\": \"binomial\", \"n\": 100, \"mechanism\": {\"name\": \"gaussian\", \"epsilon\": 1, \"delta\": 1e-6, \"sensitivity\": 1, \"sigma\": 3.730631634, \"calibration\": \"analytic\"}, \"noisy_statistics\": [1e20]}")
run(failure "noisy_statistics\\[0\\] is 1e\\+20, but the statistic of n = 100 records lies in \\[0, 100\\]"
    ${INFER} huge.json --draws 50 --burnin 50)

# 5.
run(failure "privpost-infer: error: [^\n]*\\(raised by draw_inverse_gamma; it depends on --prior, and the release record's n"
    ${INFER} ${DATA}/cirrhosis_release.json --prior 0,0,1e-300,1e-300,1e-300,1e-300 --draws 20 --burnin 20)

# 6. The record of item 3 with the mechanism block of a discrete Laplace release of counts.
file(READ "${WORKDIR}/ab.json" record)
string(JSON record SET "${record}" mechanism
       "{\"name\": \"discrete-laplace\", \"epsilon\": 1, \"sensitivity\": 2, \"scale\": 2, \"granularity\": 1, \"lattice\": \"exact\", \"lattice_dimension\": 6, \"lattice_sensitivity\": 2}")
file(WRITE "${WORKDIR}/ab_lattice.json" "${record}")
foreach(extra "" "--shift-moves;2")
  run(failure "release record: mechanism 'discrete-laplace' with the pairwise-tables model; the lattice mechanisms serve"
      ${INFER} ab_lattice.json ${extra})
endforeach()
