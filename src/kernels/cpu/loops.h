// cpu_kernel: turns a scalar lambda into an elementwise kernel over a
// TensorIter, with fast paths for contiguous and broadcast-scalar operands.
//   cpu_kernel(iter, [](float a, float b) { return a + b; });
// The lambda's parameter and return types must equal the operand dtypes.
#pragma once

#include <tuple>
#include <utility>

#include "kernels/tensor_iter.h"

namespace ember {

template <typename F>
struct FnTraits : FnTraits<decltype(&F::operator())> {};
template <typename C, typename R, typename... A>
struct FnTraits<R (C::*)(A...) const> {
  using result = R;
  using args = std::tuple<A...>;
  static constexpr int arity = sizeof...(A);
};

namespace detail {

template <typename F, size_t... I>
inline void strided_loop(const F& f, char** data, const int64_t* s, int64_t n,
                         std::index_sequence<I...>) {
  using Tr = FnTraits<F>;
  using R = typename Tr::result;
  for (int64_t k = 0; k < n; ++k) {
    *reinterpret_cast<R*>(data[0] + k * s[0]) =
        f(*reinterpret_cast<std::tuple_element_t<I, typename Tr::args>*>(data[I + 1] +
                                                                        k * s[I + 1])...);
  }
}

template <typename F, size_t... I>
inline void contiguous_loop(const F& f, char** data, int64_t n, std::index_sequence<I...>) {
  using Tr = FnTraits<F>;
  using R = typename Tr::result;
  R* __restrict__ out = reinterpret_cast<R*>(data[0]);
  std::tuple<const std::tuple_element_t<I, typename Tr::args>* __restrict__...> in{
      reinterpret_cast<const std::tuple_element_t<I, typename Tr::args>*>(data[I + 1])...};
  for (int64_t k = 0; k < n; ++k) out[k] = f(std::get<I>(in)[k]...);
}

// Input `which` is a broadcast scalar (stride 0); the others are contiguous.
template <size_t Which, typename F, size_t... I>
inline void scalar_arg_loop(const F& f, char** data, int64_t n, std::index_sequence<I...>) {
  using Tr = FnTraits<F>;
  using R = typename Tr::result;
  using S = std::tuple_element_t<Which, typename Tr::args>;
  const S scalar = *reinterpret_cast<const S*>(data[Which + 1]);
  R* __restrict__ out = reinterpret_cast<R*>(data[0]);
  std::tuple<const std::tuple_element_t<I, typename Tr::args>* __restrict__...> in{
      reinterpret_cast<const std::tuple_element_t<I, typename Tr::args>*>(data[I + 1])...};
  for (int64_t k = 0; k < n; ++k)
    out[k] = f((I == Which ? scalar : std::get<I>(in)[k])...);
}

template <typename T>
constexpr int64_t sz = static_cast<int64_t>(sizeof(T));

}  // namespace detail

template <typename F>
void cpu_kernel(const TensorIter& iter, const F& f, int64_t grain = kGrainSize) {
  using Tr = FnTraits<F>;
  using R = typename Tr::result;
  constexpr int N = Tr::arity;
  using Seq = std::make_index_sequence<N>;
  iter.for_each(
      [&](char** data, const int64_t* s, int64_t n) {
        bool out_contig = s[0] == detail::sz<R>;
        if constexpr (N == 1) {
          using A0 = std::tuple_element_t<0, typename Tr::args>;
          if (out_contig && s[1] == detail::sz<A0>)
            return detail::contiguous_loop(f, data, n, Seq{});
        } else if constexpr (N == 2) {
          using A0 = std::tuple_element_t<0, typename Tr::args>;
          using A1 = std::tuple_element_t<1, typename Tr::args>;
          if (out_contig) {
            bool c0 = s[1] == detail::sz<A0>, c1 = s[2] == detail::sz<A1>;
            if (c0 && c1) return detail::contiguous_loop(f, data, n, Seq{});
            if (c0 && s[2] == 0) return detail::scalar_arg_loop<1>(f, data, n, Seq{});
            if (s[1] == 0 && c1) return detail::scalar_arg_loop<0>(f, data, n, Seq{});
          }
        }
        detail::strided_loop(f, data, s, n, Seq{});
      },
      grain);
}

}  // namespace ember
