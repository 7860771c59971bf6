// Uses the installed libember through <ember/ember.h>: a oneDNN matmul and a
// gradient, each checked against values worked out by hand.
#include <cstdio>
#include <vector>

#include <ember/ember.h>
#include <ember/jit/model_file.h>
#include <ember/jit/trace.h>

int main(int argc, char** argv) {
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
  if (argc > 1) {
    // A tiny model for consumer_runtime: y = x @ W^T + b with W = [[1, 2, 3],
    // [0, 0, 1]], b = [1, -1], so y([1, 1, 1]) = [7, 0].
    nn::Linear lin(3, 2);
    {
      NoGradGuard ng;
      lin.weight.copy_(tensor<float>({1, 2, 3, 0, 0, 1}, {2, 3}));
      lin.bias.copy_(tensor<float>({1, -1}));
    }
    jit::TraceOptions o;
    o.input_names = {"x"};
    o.output_names = {"y"};
    jit::ModelFile f;
    f.graph = jit::trace(lin, {ones({1, 3})}, o);
    jit::save_model(f, argv[1]);
  }
  std::printf("consumer ok: a @ a.t() = [[5, 14], [14, 50]], grad = [[3, 3], [5, 5], [7, 7]]\n");
  return 0;
}
