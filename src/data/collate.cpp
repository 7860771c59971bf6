// default_collate (recursive stack), pad_sequence and pad_collate.
#include "ember/data/collate.h"

#include <algorithm>
#include <cstring>

#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"

namespace ember::data {

namespace {

// Stacks same-shaped tensors; a memcpy per sample when they are contiguous
// (the common case: each sample was just produced by a transform).
Tensor stack_tensors(const std::vector<Tensor>& ts, const std::string& path) {
  const Tensor& first = ts[0];
  bool contiguous = true;
  for (size_t i = 0; i < ts.size(); ++i) {
    EMBER_CHECK(ts[i].sizes().equals(first.sizes()) && ts[i].dtype() == first.dtype(),
                "default_collate: element {}of sample {} is Tensor[{}] {} but sample 0 has "
                "Tensor[{}] {}; every sample must have the same shape and dtype (use a padding "
                "collate such as pad_collate for variable-length data)",
                path, i, fmt::join(ts[i].sizes(), ", "), to_string(ts[i].dtype()),
                fmt::join(first.sizes(), ", "), to_string(first.dtype()));
    contiguous = contiguous && ts[i].is_contiguous() && ts[i].device() == kCPU;
  }
  if (!contiguous) return stack(ts, 0);
  std::vector<int64_t> shape{static_cast<int64_t>(ts.size())};
  for (int64_t s : first.sizes()) shape.push_back(s);
  Tensor out = empty(shape, first.dtype());
  const size_t bytes = first.nbytes();
  auto* dst = static_cast<char*>(out.data_ptr());
  for (size_t i = 0; i < ts.size(); ++i) std::memcpy(dst + i * bytes, ts[i].data_ptr(), bytes);
  return out;
}

Sample collate_at(std::vector<Sample>& samples, const std::string& path) {
  const Sample& first = samples[0];
  for (size_t i = 1; i < samples.size(); ++i) {
    bool same = samples[i].kind() == first.kind() &&
                (first.is_tensor() || first.is_none() || samples[i].size() == first.size()) &&
                (!first.is_map() || samples[i].keys() == first.keys());
    EMBER_CHECK(same,
                "default_collate: element {}of sample {} is {} but sample 0 has {}; every "
                "sample must have the same structure",
                path, i, samples[i].describe(), first.describe());
  }
  switch (first.kind()) {
    case Sample::Kind::None:
      return Sample();
    case Sample::Kind::Tensor: {
      std::vector<Tensor> ts;
      ts.reserve(samples.size());
      for (auto& s : samples) ts.push_back(s.tensor());
      return Sample(stack_tensors(ts, path));
    }
    case Sample::Kind::Tuple:
    case Sample::Kind::Map: {
      std::vector<Sample> fields;
      for (size_t f = 0; f < first.size(); ++f) {
        std::vector<Sample> column;
        column.reserve(samples.size());
        for (auto& s : samples) column.push_back(std::move(s[f]));
        std::string sub = first.is_map() ? fmt::format("{}'{}' ", path, first.keys()[f])
                                         : fmt::format("{}[{}] ", path, f);
        fields.push_back(collate_at(column, sub));
      }
      if (first.is_tuple()) return Sample::tuple(std::move(fields));
      std::vector<std::pair<std::string, Sample>> named;
      for (size_t f = 0; f < fields.size(); ++f)
        named.emplace_back(first.keys()[f], std::move(fields[f]));
      return Sample::map(std::move(named));
    }
  }
  return Sample();
}

}  // namespace

Sample default_collate(std::vector<Sample> samples) {
  EMBER_CHECK(!samples.empty(), "default_collate: expected at least one sample, got none");
  return collate_at(samples, "");
}

Tensor pad_sequence(const std::vector<Tensor>& sequences, bool batch_first, double padding_value) {
  EMBER_CHECK(!sequences.empty(), "pad_sequence: expected at least one sequence, got none");
  const Tensor& first = sequences[0];
  EMBER_CHECK(first.dim() >= 1, "pad_sequence: expected sequences with at least 1 dim, got a "
              "0-dim tensor");
  int64_t max_len = 0;
  for (size_t i = 0; i < sequences.size(); ++i) {
    const Tensor& s = sequences[i];
    bool trailing_match = s.dim() == first.dim() && s.dtype() == first.dtype();
    for (int64_t d = 1; trailing_match && d < s.dim(); ++d)
      trailing_match = s.size(d) == first.size(d);
    EMBER_CHECK(trailing_match,
                "pad_sequence: sequence {} is Tensor[{}] {} but sequence 0 is Tensor[{}] {}; "
                "only dim 0 (the length) may differ",
                i, fmt::join(s.sizes(), ", "), to_string(s.dtype()), fmt::join(first.sizes(), ", "),
                to_string(first.dtype()));
    max_len = std::max(max_len, s.size(0));
  }
  std::vector<int64_t> shape{static_cast<int64_t>(sequences.size()), max_len};
  for (int64_t d = 1; d < first.dim(); ++d) shape.push_back(first.size(d));
  Tensor out = full(shape, padding_value, first.dtype());
  for (size_t i = 0; i < sequences.size(); ++i) {
    int64_t len = sequences[i].size(0);
    if (len > 0) out.select(0, static_cast<int64_t>(i)).narrow(0, 0, len).copy_(sequences[i]);
  }
  return batch_first ? out : out.transpose(0, 1).contiguous();
}

CollateFn pad_collate(int64_t padding_index) {
  return [padding_index](std::vector<Sample> samples) {
    EMBER_CHECK(!samples.empty(), "pad_collate: expected at least one sample, got none");
    std::vector<Tensor> seqs;
    std::vector<int64_t> lengths;
    std::vector<Sample> labels;
    for (size_t i = 0; i < samples.size(); ++i) {
      const Sample& s = samples[i];
      EMBER_CHECK(s.is_tuple() && s.size() == 2 && s[0].is_tensor() && s[0].tensor().dim() == 1,
                  "pad_collate: expected (token ids [L], label) samples, sample {} is {}", i,
                  s.describe());
      seqs.push_back(s[0].tensor());
      lengths.push_back(s[0].tensor().size(0));
      labels.push_back(s[1]);
    }
    std::vector<Sample> out;
    out.emplace_back(pad_sequence(seqs, true, static_cast<double>(padding_index)));
    out.emplace_back(tensor<int64_t>(lengths));
    out.push_back(default_collate(std::move(labels)));
    return Sample::tuple(std::move(out));
  };
}

}  // namespace ember::data
