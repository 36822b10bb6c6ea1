#!/bin/sh
# privpost quick start, step 1 of 2 (README): installs the Debian packages that are missing, then configures,
# builds and runs the main example. Step 2 is `cmake --workflow --preset test`.
set -eu
cd "$(dirname "$0")/.."

packages="g++ cmake ninja-build libeigen3-dev libboost-dev catch2 libbenchmark-dev libcli11-dev nlohmann-json3-dev gnuplot-nox doxygen libopenmpi-dev openmpi-bin"
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "privpost: installing missing Debian packages:$missing"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
fi

cmake --preset default
cmake --build --preset example
./build/default/examples/privpost_binomial_end_to_end
