// The owner of the test programs' precompiled header (tests/CMakeLists.txt, PRIVPOST_PRECOMPILED_HEADERS): CMake builds
// the header with this target's flags, which every test program shares; the translation unit itself is empty.
