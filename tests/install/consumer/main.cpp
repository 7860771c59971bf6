// Uses the installed libember through <ember/ember.h>: a oneDNN matmul and a
// gradient, each checked against values worked out by hand.
#include <cstdio>
#include <vector>

#include <ember/ember.h>

int main() {
  using namespace ember;
  Tensor a = arange(6).reshape({2, 3}).to(kFloat32);  // [[0, 1, 2], [3, 4, 5]]
  Tensor d = matmul(a, a.t());
  std::vector<float> want_d = {5, 14, 14, 50};
  Tensor w = ones({3, 2}).requires_grad_();
  matmul(a, w).sum().backward();  // d/dw[i][j] = a[0][i] + a[1][i]
  std::vector<float> want_g = {3, 3, 5, 5, 7, 7};
  if (d.to_vector<float>() != want_d || w.grad().to_vector<float>() != want_g) {
    std::printf("consumer: wrong values\n");
    return 1;
  }
  std::printf("consumer ok: a @ a.t() = [[5, 14], [14, 50]], grad = [[3, 3], [5, 5], [7, 7]]\n");
  return 0;
}
