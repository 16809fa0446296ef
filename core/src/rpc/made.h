// Private: a value made where it is kept.
#pragma once

#include <type_traits>

namespace weft::detail {

// A value that `make()` returns, for initializing an object of its type in
// place: the conversion's result is the object itself (no temporary to move
// from), as when a variant's alternative or a vector's element is
// constructed from it. Each moved-from message part still costs its
// destructor (nlohmann values destroy out of line), so the per-message path
// makes its parts once, where they end up.
template <class F>
struct Made {
  F make;
  operator std::invoke_result_t<F&>() { return make(); }
};
template <class F>
Made(F) -> Made<F>;

}  // namespace weft::detail
