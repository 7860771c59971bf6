// CosineSimilarity and PairwiseDistance over the functional distances.
#include "ember/nn/distance.h"

#include "ember/ops/distance.h"

namespace ember::nn {

CosineSimilarity::CosineSimilarity(int64_t d, double e) : Module("CosineSimilarity"), dim(d), eps(e) {}
Tensor CosineSimilarity::forward(const Tensor& x1, const Tensor& x2) { return cosine_similarity(x1, x2, dim, eps); }

PairwiseDistance::PairwiseDistance(double p, double e, bool k)
    : Module("PairwiseDistance"), norm(p), eps(e), keepdim(k) {}
Tensor PairwiseDistance::forward(const Tensor& x1, const Tensor& x2) {
  return pairwise_distance(x1, x2, norm, eps, keepdim);
}

}  // namespace ember::nn
