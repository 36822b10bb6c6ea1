// privpost/version.hpp
// The library version, kept equal to project(VERSION) in CMakeLists.txt (a test checks it),
// written into every release record so a release says which code made it.
#pragma once

#define PRIVPOST_VERSION_MAJOR 0
#define PRIVPOST_VERSION_MINOR 1
#define PRIVPOST_VERSION_PATCH 0

namespace privpost {
inline constexpr const char* version_string = "0.1.0";
}  // namespace privpost
