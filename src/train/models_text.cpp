// The zoo's text classifiers: LSTMClassifier (LSTM / GRU over padded
// batches with lengths) and TransformerClassifier.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ember/core/trace_hook.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/reduction.h"
#include "ember/train/models.h"

namespace ember::train {

namespace {

std::string shape_str(const Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes().vec(), ", ")); }

// tokens int64 [B, T] and (when defined) lengths int64 [B] in [1, T].
void check_text_input(const char* model, const Tensor& tokens, const Tensor& lengths) {
  EMBER_CHECK(tokens.defined() && tokens.dim() == 2 && tokens.dtype() == kInt64,
              "{}: expected token ids int64 [B, T], got {} of dtype {}", model,
              tokens.defined() ? shape_str(tokens) : "an undefined tensor",
              tokens.defined() ? to_string(tokens.dtype()) : "none");
  if (!lengths.defined()) return;
  EMBER_CHECK(lengths.dim() == 1 && lengths.dtype() == kInt64 && lengths.size(0) == tokens.size(0),
              "{}: expected lengths int64 [{}] (one per sequence of tokens {}), got {} of dtype {}", model,
              tokens.size(0), shape_str(tokens), shape_str(lengths), to_string(lengths.dtype()));
  // Tracing: the lengths are a graph input; reading them here would be a
  // host read (a TracingError), so their range is not checked by the graph.
  if (trace_hook()) return;
  const int64_t steps = tokens.size(1);
  std::vector<int64_t> lens = lengths.to_vector<int64_t>();
  for (size_t b = 0; b < lens.size(); ++b)
    EMBER_CHECK(lens[b] >= 1 && lens[b] <= steps,
                "{}: expected lengths in [1, {}] (the padded length of tokens {}), got {} at {}", model, steps,
                shape_str(tokens), lens[b], b);
}

// (tokens, lengths) of a Sample: a 2-tuple of tensors, or tokens alone.
std::pair<Tensor, Tensor> text_sample(const char* model, const data::Sample& input) {
  if (input.is_tensor()) return {input.tensor(), Tensor()};
  EMBER_CHECK(input.is_tuple() && input.size() == 2 && input[0].is_tensor() && input[1].is_tensor(),
              "{}: expected input (token ids [B, T], lengths [B]) or token ids alone, got {}", model,
              input.describe());
  return {input[0].tensor(), input[1].tensor()};
}

}  // namespace

// ---- LSTMClassifier ----

LSTMClassifier::LSTMClassifier(const LSTMClassifierOptions& options_) : SampleModule("LSTMClassifier"),
                                                                       options(options_) {
  const auto& o = options;
  EMBER_CHECK(o.cell == "lstm" || o.cell == "gru", "LSTMClassifier: expected cell \"lstm\" or \"gru\", got \"{}\"",
              o.cell);
  EMBER_CHECK(o.vocab_size > 0 && o.embed_dim > 0 && o.hidden > 0 && o.num_layers > 0 && o.num_classes > 0,
              "LSTMClassifier: expected vocab_size, embed_dim, hidden, num_layers and num_classes > 0, got {}, {}, "
              "{}, {}, {}",
              o.vocab_size, o.embed_dim, o.hidden, o.num_layers, o.num_classes);
  embedding = register_module("embedding", std::make_shared<nn::Embedding>(o.vocab_size, o.embed_dim, o.padding_idx));
  // Inter-layer dropout only exists with 2+ layers (PyTorch warns otherwise).
  nn::RNNOptions ro{.num_layers = o.num_layers,
                    .batch_first = true,
                    .dropout = o.num_layers > 1 ? o.dropout : 0.0,
                    .bidirectional = o.bidirectional};
  if (o.cell == "lstm") rnn = register_module("rnn", std::make_shared<nn::LSTM>(o.embed_dim, o.hidden, ro));
  else rnn = register_module("rnn", std::make_shared<nn::GRU>(o.embed_dim, o.hidden, ro));
  dropout = register_module("dropout", std::make_shared<nn::Dropout>(o.dropout));
  fc = register_module("fc", std::make_shared<nn::Linear>(o.hidden * (o.bidirectional ? 2 : 1), o.num_classes));
}

Tensor LSTMClassifier::forward(const Tensor& tokens) { return forward(tokens, Tensor()); }

Tensor LSTMClassifier::forward(const Tensor& tokens, const Tensor& lengths) {
  check_text_input("LSTMClassifier", tokens, lengths);
  Tensor x = embedding->forward(tokens);
  // h_n [num_layers * directions, B, hidden], at each sequence's own length.
  Tensor h_n;
  if (auto* lstm = dynamic_cast<nn::LSTM*>(rnn.get()))
    h_n = (lengths.defined() ? lstm->forward(x, lengths, {}) : lstm->forward(x)).second.first;
  else {
    auto& gru = dynamic_cast<nn::GRU&>(*rnn);
    h_n = (lengths.defined() ? gru.forward(x, lengths, Tensor()) : gru.forward(x)).second;
  }
  const int64_t n = h_n.size(0);
  Tensor feature = options.bidirectional ? cat({h_n.select(0, n - 2), h_n.select(0, n - 1)}, 1) : h_n.select(0, n - 1);
  return fc->forward(dropout->forward(feature));
}

Tensor LSTMClassifier::forward_sample(const data::Sample& input) {
  auto [tokens, lengths] = text_sample("LSTMClassifier", input);
  return forward(tokens, lengths);
}

// ---- TransformerClassifier ----

TransformerClassifier::TransformerClassifier(const TransformerClassifierOptions& options_)
    : SampleModule("TransformerClassifier"), options(options_) {
  const auto& o = options;
  EMBER_CHECK(o.vocab_size > 0 && o.d_model > 0 && o.max_len > 0 && o.num_layers > 0 && o.num_classes > 0,
              "TransformerClassifier: expected vocab_size, d_model, max_len, num_layers and num_classes > 0, got {}, "
              "{}, {}, {}, {}",
              o.vocab_size, o.d_model, o.max_len, o.num_layers, o.num_classes);
  EMBER_CHECK(o.nhead > 0 && o.d_model % o.nhead == 0,
              "TransformerClassifier: d_model ({}) must be divisible by nhead ({})", o.d_model, o.nhead);
  embedding = register_module("embedding", std::make_shared<nn::Embedding>(o.vocab_size, o.d_model, o.padding_idx));
  pos_embedding = register_module("pos_embedding", std::make_shared<nn::Embedding>(o.max_len, o.d_model));
  dropout = register_module("dropout", std::make_shared<nn::Dropout>(o.dropout));
  nn::TransformerEncoderLayer layer(o.d_model, o.nhead, o.dim_feedforward, o.dropout, o.activation, 1e-5,
                                    /*batch_first=*/true);
  encoder = register_module("encoder", std::make_shared<nn::TransformerEncoder>(layer, o.num_layers));
  fc = register_module("fc", std::make_shared<nn::Linear>(o.d_model, o.num_classes));
}

Tensor TransformerClassifier::forward(const Tensor& tokens) { return forward(tokens, Tensor()); }

Tensor TransformerClassifier::forward(const Tensor& tokens, const Tensor& lengths) {
  check_text_input("TransformerClassifier", tokens, lengths);
  const int64_t steps = tokens.size(1);
  EMBER_CHECK(steps <= options.max_len,
              "TransformerClassifier: sequence length {} (tokens {}) exceeds max_len {}; truncate the sequences or "
              "raise max_len",
              steps, shape_str(tokens), options.max_len);
  Tensor positions = arange(steps, TensorOptions().dtype(kInt64));
  Tensor x = dropout->forward(embedding->forward(tokens) + pos_embedding->forward(positions));
  if (!lengths.defined()) return fc->forward(mean(encoder->forward(x), {1}));
  // true marks padding: position t >= length.
  Tensor pad = ge(positions.unsqueeze(0), lengths.unsqueeze(1));
  Tensor y = encoder->forward(x, Tensor(), pad);
  // Mean over the valid positions; padded ones are zeroed out, not averaged.
  Tensor keep = logical_not(pad).to(y.dtype()).unsqueeze(2);
  Tensor pooled = sum(y * keep, {1}) / lengths.to(y.dtype()).unsqueeze(1);
  return fc->forward(pooled);
}

Tensor TransformerClassifier::forward_sample(const data::Sample& input) {
  auto [tokens, lengths] = text_sample("TransformerClassifier", input);
  return forward(tokens, lengths);
}

}  // namespace ember::train
