// The one Catch2 main for the weft_tests binary.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
