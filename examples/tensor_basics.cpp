// A tour of Ember tensors: factories, views, broadcasting, reductions, matmul.
#include <iostream>

#include "ember/ember.h"

int main() {
  using namespace ember;
  manual_seed(0);
  Tensor a = arange(6).reshape({2, 3}).to(kFloat32);
  std::cout << "a =\n" << a << "\n";
  std::cout << "a.t() =\n" << a.t() << "\n";
  Tensor b = ones({3}) * 2;
  std::cout << "a * b (broadcast) =\n" << a * b << "\n";
  std::cout << "exp(a[0]) = " << a[0].exp() << "\n";
  std::cout << "randn(2, 2) = " << randn({2, 2}) << "\n";
  return 0;
}
