// Catch2 v2/v3 shim: tests include this and use the common macros.
#pragma once
#if MPIX_CATCH2_V3
#include <catch2/catch_all.hpp>
#else
#include <catch2/catch.hpp>
#endif
