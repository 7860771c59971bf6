// Module system: registration, traversal, names and reprs equal to
// PyTorch's, state_dict / load_state_dict, modes, dtype, grads, containers.
#include <memory>

#include "nn/reference.h"

using namespace ember;
using namespace ember::testing;
using nn::ModulePtr;

namespace {
template <typename M, typename... A>
ModulePtr mk(A&&... a) {
  return std::make_shared<M>(std::forward<A>(a)...);
}

std::string join_keys(const std::vector<std::string>& v) { return fmt::format("{}", fmt::join(v, ",")); }
std::string names(const nn::NamedTensors& v) {
  std::vector<std::string> out;
  for (auto& [k, t] : v) out.push_back(k);
  return join_keys(out);
}
std::string names(const nn::NamedModules& v) {
  std::vector<std::string> out;
  for (auto& [k, t] : v) out.push_back(k);
  return join_keys(out);
}

// The same architectures gen_nn.py builds in PyTorch.
std::shared_ptr<nn::Module> build(const std::string& which) {
  if (which == "mlp") return std::make_shared<nn::Sequential>(std::initializer_list<ModulePtr>{
                          mk<nn::Linear>(784, 256), mk<nn::ReLU>(), mk<nn::Linear>(256, 10)});
  if (which == "seqbn")
    return std::make_shared<nn::Sequential>(std::initializer_list<ModulePtr>{
        mk<nn::Linear>(4, 8), mk<nn::BatchNorm1d>(8), mk<nn::ReLU>(), mk<nn::Dropout>(0.1), mk<nn::Linear>(8, 2)});
  if (which == "nested") {
    auto features = std::make_shared<nn::Sequential>(
        std::initializer_list<ModulePtr>{mk<nn::Linear>(3, 4), mk<nn::GELU>("tanh")});
    auto heads = std::make_shared<nn::ModuleList>(
        std::initializer_list<ModulePtr>{mk<nn::Linear>(4, 2), mk<nn::Linear>(4, 2, false)});
    auto extra = std::make_shared<nn::ModuleDict>(
        nn::NamedModules{{"emb", mk<nn::Embedding>(10, 3, 0)}, {"gn", mk<nn::GroupNorm>(2, 4)}});
    return std::make_shared<nn::Sequential>(nn::NamedModules{
        {"features", features}, {"norm", mk<nn::LayerNorm>(std::vector<int64_t>{4})}, {"heads", heads}, {"extra", extra}});
  }
  if (which == "misc")
    return std::make_shared<nn::Sequential>(std::initializer_list<ModulePtr>{
        mk<nn::Bilinear>(3, 4, 5), mk<nn::Identity>(), mk<nn::Flatten>(), mk<nn::Unflatten>(1, std::vector<int64_t>{2, 5}),
        mk<nn::Dropout2d>(), mk<nn::Dropout>(0.25), mk<nn::BatchNorm2d>(16, 1e-5, std::nullopt),
        mk<nn::BatchNorm1d>(5, 1e-3, 0.1, false, false), mk<nn::LeakyReLU>(), mk<nn::LeakyReLU>(0.2), mk<nn::GELU>(),
        mk<nn::SiLU>(), mk<nn::Sigmoid>(), mk<nn::Tanh>(), mk<nn::Softmax>(1), mk<nn::LogSoftmax>(-1),
        mk<nn::Softplus>(), mk<nn::ELU>(), mk<nn::ELU>(0.5), mk<nn::LayerNorm>(std::vector<int64_t>{10}),
        mk<nn::LayerNorm>(std::vector<int64_t>{4, 5}, 1e-6, false), mk<nn::Embedding>(10, 3),
        mk<nn::GroupNorm>(3, 6, 1e-5, false)});
  if (which == "losses")
    return std::make_shared<nn::ModuleList>(std::initializer_list<ModulePtr>{
        mk<nn::CrossEntropyLoss>(), mk<nn::NLLLoss>(), mk<nn::BCELoss>(), mk<nn::BCEWithLogitsLoss>(),
        mk<nn::MSELoss>(), mk<nn::L1Loss>(), mk<nn::SmoothL1Loss>(), mk<nn::HuberLoss>(), mk<nn::KLDivLoss>()});
  if (which == "weighted_loss") return std::make_shared<nn::CrossEntropyLoss>(nn::CrossEntropyOptions{.weight = ones({3})});
  return nullptr;
}
}  // namespace

TEST(NnModule, ReprKeysAndNamesEqualPyTorch) {
  for (const char* which : {"mlp", "seqbn", "nested", "misc", "losses", "weighted_loss"}) {
    SCOPED_TRACE(which);
    auto m = build(which);
    EXPECT_EQ(m->repr(), ref_meta(std::string("repr.") + which));
    EXPECT_EQ(join_keys(m->state_dict().keys()), ref_meta(std::string("keys.") + which));
    EXPECT_EQ(names(m->named_parameters()), ref_meta(std::string("params.") + which));
    EXPECT_EQ(names(m->named_modules()), ref_meta(std::string("modules.") + which));
  }
  EXPECT_EQ(build("mlp")->repr(),
            "Sequential(\n  (0): Linear(in_features=784, out_features=256, bias=True)\n  (1): ReLU()\n"
            "  (2): Linear(in_features=256, out_features=10, bias=True)\n)");
}

TEST(NnModule, PyFloatSpellsLikePython) {
  EXPECT_EQ(nn::py_float(1e-5), "1e-05");
  EXPECT_EQ(nn::py_float(0.1), "0.1");
  EXPECT_EQ(nn::py_float(1.0), "1.0");
  EXPECT_EQ(nn::py_float(-2.5), "-2.5");
  EXPECT_EQ(nn::py_float(1e16), "1e+16");
  EXPECT_EQ(nn::py_float(123456.0), "123456.0");
  EXPECT_EQ(nn::py_float(0.0001), "0.0001");
  EXPECT_EQ(nn::py_float(1.5e-7), "1.5e-07");
  EXPECT_EQ(nn::py_tuple({3}), "(3,)");
}

TEST(NnModule, RegistrationRules) {
  nn::Module m("Custom");
  Tensor& w = m.register_parameter("w", zeros({2}));
  EXPECT_TRUE(w.requires_grad());
  m.register_buffer("stat", ones({2}));
  m.register_buffer("scratch", ones({2}), false);
  m.register_parameter("none", Tensor());
  expect_error([&] { m.register_parameter("w", zeros({1})); }, {"Custom", "'w' already exists"});
  expect_error([&] { m.register_buffer("a.b", zeros({1})); }, {"must not contain '.'"});
  EXPECT_EQ(names(m.named_parameters()), "w");
  EXPECT_EQ(names(m.named_buffers()), "stat,scratch");
  EXPECT_EQ(join_keys(m.state_dict().keys()), "w,stat");  // non-persistent and None are left out
  expect_error([&] { m.forward(zeros({1})); }, {"Custom", "no single-tensor forward"});
  // Assigning through the slot reference is seen by the registry.
  w = full({2}, 3.0);
  EXPECT_EQ(m.parameters()[0].sum().item<double>(), 6.0);
}

TEST(NnModule, SharedParametersAreListedOnce) {
  auto lin = std::make_shared<nn::Linear>(3, 3);
  nn::Sequential seq{lin, mk<nn::ReLU>(), lin};
  EXPECT_EQ(seq.parameters().size(), 2u);
  EXPECT_EQ(names(seq.named_parameters()), "0.weight,0.bias");
  EXPECT_EQ(seq.state_dict().size(), 4u);  // state_dict keeps every name, like PyTorch
  EXPECT_EQ(names(seq.named_modules()), ",0,1");
}

TEST(NnModule, TrainEvalToZeroGradFreezeApply) {
  auto m = build("seqbn");
  EXPECT_TRUE(m->is_training());
  m->eval();
  for (auto& mod : m->modules()) EXPECT_FALSE(mod->is_training());
  m->train();
  for (auto& mod : m->modules()) EXPECT_TRUE(mod->is_training());

  m->to(kFloat64);
  for (auto& [k, t] : m->state_dict())
    EXPECT_EQ(t.dtype(), k.find("num_batches_tracked") != std::string::npos ? kInt64 : kFloat64) << k;
  auto* lin = dynamic_cast<nn::Linear*>((*std::dynamic_pointer_cast<nn::Sequential>(m))[0].get());
  ASSERT_NE(lin, nullptr);
  EXPECT_EQ(lin->weight.dtype(), kFloat64);  // the member sees the converted slot
  EXPECT_TRUE(lin->weight.requires_grad());

  Tensor y = m->forward(randn({5, 4}, kFloat64));
  y.sum().backward();
  for (auto& p : m->parameters()) EXPECT_TRUE(p.grad().defined());
  m->zero_grad(false);
  for (auto& p : m->parameters()) EXPECT_EQ(p.grad().abs().sum().item<double>(), 0.0);
  m->zero_grad();
  for (auto& p : m->parameters()) EXPECT_FALSE(p.grad().defined());

  m->requires_grad_(false);
  for (auto& p : m->parameters()) EXPECT_FALSE(p.requires_grad());
  EXPECT_FALSE(m->forward(randn({5, 4}, kFloat64)).requires_grad());
  m->requires_grad_(true);

  std::vector<std::string> order;
  m->apply([&](nn::Module& mod) { order.push_back(mod.type_name()); });
  EXPECT_EQ(join_keys(order), "Linear,BatchNorm1d,ReLU,Dropout,Linear,Sequential");
  EXPECT_EQ(m->get_submodule("1")->type_name(), "BatchNorm1d");
  EXPECT_EQ(m->get_submodule("7"), nullptr);
}

TEST(NnModule, StateDictRoundTripAndLoadErrors) {
  auto a = build("seqbn"), b = build("seqbn");
  a->forward(randn({6, 4}));  // moves the running stats
  b->load_state_dict(a->state_dict());
  for (auto& [k, t] : a->state_dict()) EXPECT_TRUE(equal(t, b->state_dict()[k])) << k;
  // state_dict shares storage with the live tensors (detached).
  Tensor w = a->state_dict()["0.weight"];
  EXPECT_FALSE(w.requires_grad());
  EXPECT_EQ(w.data_ptr(), a->named_parameters()[0].second.data_ptr());

  StateDict bad;
  for (auto& [k, t] : a->state_dict())
    if (k != "0.bias") bad.insert(k, t);
  bad.insert("5.weight", zeros({1}));
  expect_error([&] { b->load_state_dict(bad); },
               {"Error(s) in loading state_dict for Sequential:", "Missing key(s) in state_dict: \"0.bias\".",
                "Unexpected key(s) in state_dict: \"5.weight\"."});
  auto res = b->load_state_dict(bad, false);
  EXPECT_EQ(join_keys(res.missing_keys), "0.bias");
  EXPECT_EQ(join_keys(res.unexpected_keys), "5.weight");

  StateDict shape;
  for (auto& [k, t] : a->state_dict()) shape.insert(k, k == "4.weight" ? zeros({3, 8}) : t);
  expect_error([&] { b->load_state_dict(shape, false); },
               {"size mismatch for 4.weight: copying a param with shape [3, 8] from checkpoint, the shape in "
                "current model is [2, 8]."});

  // "module." prefix from data-parallel wrappers.
  StateDict prefixed;
  for (auto& [k, t] : a->state_dict()) prefixed.insert("module." + k, t * 0 + 1);
  auto r = b->load_state_dict(prefixed);
  EXPECT_TRUE(r.missing_keys.empty() && r.unexpected_keys.empty());
  EXPECT_EQ(b->state_dict()["4.bias"].sum().item<double>(), 2.0);
  // dtype converts on load.
  StateDict f64;
  for (auto& [k, t] : a->state_dict()) f64.insert(k, t.to(kFloat64));
  b->load_state_dict(f64);
  EXPECT_EQ(b->state_dict()["0.weight"].dtype(), kFloat32);
}

TEST(NnModule, ContainersIndexAndForward) {
  nn::Sequential seq;
  seq.push_back(mk<nn::Linear>(2, 3)).push_back("act", mk<nn::Tanh>());
  EXPECT_EQ(seq.size(), 2u);
  EXPECT_EQ(seq[-1]->type_name(), "Tanh");
  EXPECT_EQ(names(seq.named_children()), "0,act");
  EXPECT_EQ(seq.forward(zeros({4, 2})).sizes().vec(), (std::vector<int64_t>{4, 3}));
  expect_error([&] { seq[2]; }, {"Sequential", "index 2 is out of range"});
  nn::ModuleList list{mk<nn::ReLU>()};
  list.push_back(mk<nn::SiLU>());
  EXPECT_EQ(list[1]->type_name(), "SiLU");
  expect_error([&] { list.forward(zeros({1})); }, {"ModuleList", "no single-tensor forward"});
  nn::ModuleDict dict;
  dict.insert("a", mk<nn::ReLU>()).insert("b", mk<nn::Tanh>()).insert("a", mk<nn::GELU>());
  EXPECT_EQ(join_keys(dict.keys()), "a,b");
  EXPECT_EQ(dict["a"]->type_name(), "GELU");
  expect_error([&] { dict["zz"]; }, {"ModuleDict", "'zz'"});
}

TEST(NnModule, SaveLoadThroughSafetensors) {
  std::string path = ::testing::TempDir() + "/ember_nn_save.safetensors";
  auto a = build("nested"), b = build("nested");
  nn::save(*a, path, {{"epoch", "3"}});
  nn::load(*b, path);
  for (auto& [k, t] : a->state_dict()) EXPECT_TRUE(equal(t, b->state_dict()[k])) << k;
  EXPECT_EQ(safetensors::load_metadata(path).at("epoch"), "3");
  auto other = build("mlp");
  expect_error([&] { nn::load(*other, path); }, {path.c_str(), "Missing key(s)", "\"0.weight\""});
}
