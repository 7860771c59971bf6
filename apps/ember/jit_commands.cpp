// ember export RUN_DIR|CHECKPOINT [--checkpoint best|last] [-o model.ember] [--optimize 0|1|2] [--dynamic batch|seq|batch,seq] [--no-verify]
//              [--format ember|onnx] [--opset 13..17]
//              [--quantize dynamic|static [--calibration-batches 32] [--observer minmax]
//               [--keep-float SCOPE...] [--max-accuracy-drop 1.0]]
//   Rebuilds the run's model from its checkpoint, traces it on a batch of the
//   run's test data, writes the .ember file and verifies it against eager
//   (bitwise at --optimize 0, else within rtol 1e-5 atol 1e-6) with
//   jit::verify_export: on that batch, at another batch size (--dynamic batch),
//   on random inputs like it, and on the next test batch. One line per case
//   and output; exit 1 when any case fails. With --quantize the graph is
//   quantized to int8 instead and checked by accuracy (quantize_export.cpp).
// ember inspect model.ember
//   Inputs/outputs, op counts, parameters, FLOPs per sample, source run.
#include "jit_commands.h"

#include "quantize_export.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "ember/core/parallel.h"
#include "ember/ember.h"
#include "ember/jit/interpreter.h"
#include "ember/jit/model_file.h"
#include "ember/jit/onnx.h"
#include "ember/runtime/onnx_model.h"
#include "ember/runtime/session.h"
#include "ember/jit/trace.h"
#include "ember/jit/passes/optimize.h"
#include "ember/jit/memory_plan.h"
#include "ember/jit/verify.h"
#include "ember/train/checkpoint.h"
#include "ember/train/config.h"
#include "ember/train/data_setup.h"
#include "ember/train/zoo.h"

namespace ember::cli {

namespace fs = std::filesystem;

namespace {

constexpr int kOk = 0, kFailed = 1;

// FNV-1a 64: a stable hash of the resolved config text (std::hash is not
// stable across builds).
std::string config_hash(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return fmt::format("{:016x}", h);
}

std::string read_text(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The inputs a batch's input part holds: one tensor, or a tuple of tensors.
std::vector<Tensor> flatten(const data::Sample& s) {
  if (s.is_tensor()) return {s.tensor()};
  EMBER_CHECK(s.is_tuple(), "export: cannot trace a model whose input is {}", s.describe());
  std::vector<Tensor> out;
  for (const data::Sample& item : s.items()) {
    EMBER_CHECK(item.is_tensor(), "export: cannot trace a model whose input is {}", s.describe());
    out.push_back(item.tensor());
  }
  return out;
}

data::Sample unflatten(const std::vector<Tensor>& in) {
  if (in.size() == 1) return data::Sample(in[0]);
  std::vector<data::Sample> items;
  for (const Tensor& t : in) items.emplace_back(t);
  return data::Sample::tuple(std::move(items));
}

// "batch,seq" -> {"batch", "seq"}; empty -> {}.
std::vector<std::string> split_dims(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < list.size()) {
    const size_t end = std::min(list.find(',', start), list.size());
    out.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// --format onnx: the traced (and optimised) graph as an ONNX file, checked by
// ONNX's checker and shape inference (jit::export_onnx), then, unless
// --no-verify, loaded back by runtime::Session's ONNX importer and compared
// with the eager model on the test batches (rtol 1e-5, atol 1e-6).
int write_onnx(const jit::ModelFile& m, const std::string& output, int opset, bool verify_it, const jit::TraceFn& fn,
               const std::vector<std::vector<Tensor>>& batches) {
  jit::OnnxExportOptions o;
  o.opset = opset;
  o.doc = "exported by ember export";
  o.metadata = m.source;  // class_names and input_transform serve `ember infer` on the .onnx file too
  jit::export_onnx(m.graph, output, o);
  int64_t params = 0;
  for (const jit::Constant& k : m.graph.constants)
    if (k.kind == jit::Constant::Kind::Parameter) params += k.data.numel();
  bool ok = true;
  std::string verdict = "not verified";
  if (verify_it) {
    const runtime::Session session(output);
    std::vector<std::string> names;
    for (size_t b = 0; b < batches.size(); ++b) {
      if (!jit::accepts_inputs(m.graph, batches[b])) continue;
      const std::vector<Tensor> want = fn(batches[b]), got = session.run(batches[b]);
      for (size_t k = 0; k < want.size(); ++k) {
        const Tensor w = want[k].to(kFloat64), g = got.at(k).to(kFloat64);
        const bool same_shape = w.sizes().equals(g.sizes());
        const double diff = same_shape && w.numel() > 0 ? max(abs(sub(w, g))).item<double>() : 0;
        const bool close = same_shape && allclose(got[k], want[k], 1e-5, 1e-6);
        std::printf("verify test batch %zu: %s: max abs diff %.3g%s\n", b, m.graph.outputs.at(k).name.c_str(), diff,
                    close ? "" : same_shape ? " (FAILED)" : " (FAILED: shapes differ)");
        ok = ok && close;
      }
      names.push_back(fmt::format("test batch {}", b));
    }
    verdict = ok ? fmt::format("verified by Ember's ONNX importer against eager (rtol 1e-5, atol 1e-6) on {}",
                               fmt::join(names, ", "))
                 : "the ONNX file differs from eager";
  }
  std::printf("%s %s: ONNX opset %d, %zu Ember nodes, %lld parameters, passed ONNX's checker (full) and shape "
              "inference, %s\n", ok ? "wrote" : "wrote (verification FAILED)", output.c_str(), opset,
              m.graph.nodes.size(), static_cast<long long>(params), verdict.c_str());
  return ok ? kOk : kFailed;
}

int run_export(const std::string& target, const std::string& which, std::string output, bool verify_it,
               const std::string& dynamic, int level, const std::string& format, int opset,
               const QuantizeOptions& quantize) {
  const bool is_dir = fs::is_directory(target);
  const fs::path ckpt_path = is_dir ? fs::path(target) / (which + ".ckpt") : fs::path(target);
  if (!fs::exists(ckpt_path))
    throw train::ConfigError(fmt::format("export: '{}' does not exist{}", ckpt_path.string(),
                                         is_dir ? " (the run has no such checkpoint yet)" : ""));
  const fs::path run_dir = is_dir ? fs::path(target) : ckpt_path.parent_path();
  train::Checkpoint ckpt = train::load_checkpoint(ckpt_path.string());
  train::Config c = train::config_from_yaml(ckpt.config_yaml, ckpt_path.string() + " (config)");
  if (c.get_int("train.threads") > 0) set_num_threads(static_cast<int>(c.get_int("train.threads")));
  manual_seed(static_cast<uint64_t>(c.get_int("train.seed")));
  train::DataBundle data = train::build_data(c);
  nn::ModulePtr model = train::build_model(c, data.info);
  model->load_state_dict(ckpt.model, true);

  // Example inputs: the first two test batches (the second checks that the
  // graph did not bake the first one's values in).
  std::vector<std::vector<Tensor>> batches;
  {
    auto loader = train::make_loader(c, data.test, false);
    for (data::Sample& batch : *loader) {
      batches.push_back(flatten(batch[0]));
      if (batches.size() == 2) break;
    }
  }
  EMBER_CHECK(!batches.empty(), "export: the run's test split is empty; nothing to trace with");
  jit::TraceFn fn = [&](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{train::model_forward(*model, unflatten(in))};
  };
  jit::TraceOptions opts;
  opts.input_names = batches[0].size() == 1 ? std::vector<std::string>{"input"}
                                            : std::vector<std::string>{"tokens", "lengths"};
  if (opts.input_names.size() != batches[0].size()) opts.input_names.clear();
  opts.output_names = {"output"};
  for (const std::string& dim : split_dims(dynamic)) {
    if (dim == "batch") {
      for (size_t i = 0; i < batches[0].size(); ++i) opts.dynamic_dims.push_back({i, 0, "batch"});
    } else if (dim == "seq") {
      const Tensor& first = batches[0][0];
      if (first.dtype() != kInt64 || first.dim() != 2)
        throw train::ConfigError(fmt::format(
            "export: --dynamic seq needs a text model (token ids int64 [batch, seq]); this run's model ({}) takes {}",
            c.get_string("model.name"), jit::TensorType::of(first).str()));
      opts.dynamic_dims.push_back({0, 1, "seq"});
    } else {
      throw train::ConfigError(
          fmt::format("export: --dynamic takes batch, seq or batch,seq; got '{}' in '{}'", dim, dynamic));
    }
  }
  jit::ModelFile m;
  m.graph = jit::trace(*model, fn, batches[0], opts);
  // ONNX files get the portable passes only (another runtime fuses for itself).
  const jit::OptimizeResult optimized =
      jit::optimize(m.graph, level, format == "onnx" ? jit::OptimizeTarget::portable : jit::OptimizeTarget::ember_runtime);
  m.graph = optimized.graph;
  m.source = {{"run_dir", fs::absolute(run_dir).lexically_normal().string()},
              {"checkpoint", fs::absolute(ckpt_path).lexically_normal().string()},
              {"config_hash", config_hash(ckpt.config_yaml)},
              {"model", c.get_string("model.name")},
              {"epoch", std::to_string(ckpt.epoch)},
              {"trained_with", "ember " + ckpt.ember_version}};
  const fs::path env = run_dir / "env.json";
  if (fs::exists(env)) {
    std::smatch match;
    std::string text = read_text(env);
    if (std::regex_search(text, match, std::regex("\"git_commit\"\\s*:\\s*\"([^\"]*)\"")))
      m.source["commit"] = match[1];
  }
  // What the passes did, for `ember inspect`.
  m.source["optimize"] = std::to_string(level);
  if (!optimized.passes.empty()) {
    std::vector<std::string> done;
    for (const jit::PassRecord& p : optimized.passes)
      done.push_back(fmt::format("{} {}->{}", p.pass, p.nodes_before, p.nodes_after));
    m.source["passes"] = fmt::format("{}", fmt::join(done, ", "));
  }
  // What evaluation did to an image before the model, for `ember infer` on image files.
  if (data.info.image_preprocess) m.source["input_transform"] = data.info.image_preprocess->to_json();
  if (data.info.feature_standardizer) m.source["input_transform"] = data.info.feature_standardizer->to_json();
  if (!data.info.class_names.empty()) m.source["class_names"] = fmt::format("{}", fmt::join(data.info.class_names, ","));

  if (format == "onnx") {
    model->eval();  // the eager reference the file is compared with (trace() restored training mode)
    return write_onnx(m, output.empty() ? (run_dir / "model.onnx").string() : output, opset, verify_it, fn, batches);
  }
  if (output.empty()) output = (run_dir / "model.ember").string();
  if (!quantize.mode.empty()) return export_quantized(std::move(m), c, data, quantize, output);
  jit::save_model(m, output);
  // Verify what was written: the file as a deployment would load it.
  std::string verdict = "not verified";
  bool ok = true;
  if (verify_it) {
    jit::ModelFile back = jit::load_model(output);
    jit::VerifyOptions vo;
    // Bitwise before passes; fp32 rounding (rtol 1e-5, atol 1e-6) after them.
    if (level > 0) vo.tol = {1e-5, 1e-6};
    vo.seed = static_cast<uint64_t>(c.get_int("train.seed"));
    // The next test batch: real data the trace did not see (a short last batch has another shape).
    if (batches.size() > 1 && jit::accepts_inputs(back.graph, batches[1])) vo.extra_cases.emplace_back("test batch 1", batches[1]);
    const jit::VerifyReport r = jit::verify_export(*model, fn, back.graph, batches[0], vo);
    std::istringstream lines(r.str());
    for (std::string line; std::getline(lines, line);) std::printf("verify %s\n", line.c_str());
    std::vector<std::string> names, failed;
    for (const jit::VerifyCase& vc : r.cases) (vc.ok() ? names : failed).push_back(vc.name);
    ok = r.ok;
    verdict = ok ? fmt::format("verified {} on {} cases ({})",
                               level == 0 ? "bitwise against eager" : "against eager (rtol 1e-5, atol 1e-6)",
                               names.size(), fmt::join(names, ", "))
                 : fmt::format("graph differs from eager on {}", fmt::join(failed, ", "));
  }
  int64_t params = 0;
  for (const jit::Constant& k : m.graph.constants)
    if (k.kind == jit::Constant::Kind::Parameter) params += k.data.numel();
  std::printf("%s %s: %zu nodes (optimize level %d), %lld parameters, %s\n",
              ok ? "wrote" : "wrote (verification FAILED)", output.c_str(), m.graph.nodes.size(), level,
              static_cast<long long>(params), verdict.c_str());
  return ok ? kOk : kFailed;
}

// [n, c_out, oh, ow] of a conv2d node before any fused pooling.
std::vector<int64_t> conv_output_sizes(const jit::Graph& g, const jit::Node& n) {
  const auto x = g.type(n.inputs[0]).sizes(), w = g.type(n.inputs[1]).sizes();
  const auto s = n.attr_ints("stride"), d = n.attr_ints("dilation"), p = n.attr_ints("padding");
  auto size = [](int64_t in, int64_t k, int64_t st, int64_t di, int64_t pads) {
    return (in + pads - di * (k - 1) - 1) / st + 1;
  };
  return {x[0], w[0], size(x[2], w[2], s[0], d[0], p[0] + p[1]), size(x[3], w[3], s[1], d[1], p[2] + p[3])};
}

// Multiply-adds x 2 of the matmul and convolution nodes (the bulk of a model's work).
double flops(const jit::Graph& g) {
  double f = 0;
  for (const jit::Node& n : g.nodes) {
    if (n.kind == "matmul" && n.outputs[0] != jit::kNoValue) {
      auto out = g.type(n.outputs[0]).sizes();
      auto a = g.type(n.inputs[0]).sizes();
      double numel = 1;
      for (int64_t s : out) numel *= static_cast<double>(s);
      f += 2 * numel * static_cast<double>(a.back());
    } else if ((n.kind == "conv2d" || n.kind == "conv2d_backward_input") && n.outputs[0] != jit::kNoValue) {
      auto out = g.type(n.outputs[0]).sizes();
      auto w = g.type(n.inputs[1]).sizes();
      if (n.kind == "conv2d" && n.find("pool")) out = conv_output_sizes(g, n);  // the output is pooled
      auto big = n.kind == "conv2d" ? out : g.type(n.inputs[0]).sizes();
      double numel = 1;
      for (int64_t s : big) numel *= static_cast<double>(s);
      f += 2 * numel * static_cast<double>(w[1] * w[2] * w[3]);
    } else if (n.kind == "rnn_layer" && n.outputs[0] != jit::kNoValue) {
      // Per step: x_t @ W_ih^T and h @ W_hh^T, [batch, gates * hidden] each.
      auto x = g.type(n.inputs[0]).sizes();
      auto w_ih = g.type(n.inputs[4]).sizes(), w_hh = g.type(n.inputs[5]).sizes();
      f += 2 * static_cast<double>(x[0] * x[1]) * static_cast<double>(w_ih[0]) * static_cast<double>(w_ih[1] + w_hh[1]);
    }
    // Control flow: a branch's or one loop iteration's work.
    for (const auto& sub : n.subgraphs) f += flops(*sub);
  }
  return f;
}

// Op counts of the control-flow nodes' sub-graphs, all levels together.
void count_subgraph_ops(const jit::Graph& g, std::map<std::string, int64_t>& counts, int64_t& graphs) {
  for (const jit::Node& n : g.nodes)
    for (const auto& sub : n.subgraphs) {
      ++graphs;
      for (const auto& [kind, count] : sub->op_counts()) counts[kind] += count;
      count_subgraph_ops(*sub, counts, graphs);
    }
}

std::string human(double v) {
  const char* units[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (v >= 1000 && u < 4) v /= 1000, ++u;
  return fmt::format("{:.3g}{}", v, units[u]);
}

// An ONNX file: its signature, ONNX op counts and parameters (as Ember reads it).
int inspect_onnx(const std::string& path) {
  const runtime::OnnxModel m = runtime::OnnxModel::load(path);
  const jit::ModelFile& sig = m.signature();
  const jit::Graph& g = sig.graph;
  std::printf("%s: ONNX model, opset %s, IR version %s, written by %s\n", path.c_str(), sig.source.at("opset").c_str(),
              sig.source.at("ir_version").c_str(), sig.producer.substr(6).c_str());
  std::printf("inputs:\n");
  for (const jit::NamedValue& v : g.inputs) std::printf("  %s: %s\n", v.name.c_str(), g.type(v.value).str().c_str());
  std::printf("outputs:\n");
  for (const jit::NamedValue& v : g.outputs) std::printf("  %s: %s\n", v.name.c_str(), g.type(v.value).str().c_str());
  int64_t nodes = 0;
  for (const auto& [op, count] : m.op_counts()) nodes += count;
  std::printf("ops (%lld ONNX nodes):\n", static_cast<long long>(nodes));
  for (const auto& [op, count] : m.op_counts()) std::printf("  %-26s %lld\n", op.c_str(), static_cast<long long>(count));
  std::printf("initializers: %lld values\n", static_cast<long long>(m.parameter_count()));
  return kOk;
}

int run_inspect(const std::string& path) {
  if (runtime::is_onnx_path(path)) return inspect_onnx(path);
  jit::ModelFile m = jit::load_model(path);
  const jit::Graph& g = m.graph;
  std::printf("%s: Ember model, format version %d, written by %s\n", path.c_str(), m.format_version,
              m.producer.c_str());
  std::printf("inputs:\n");
  for (const jit::NamedValue& v : g.inputs) std::printf("  %s: %s\n", v.name.c_str(), g.type(v.value).str().c_str());
  std::printf("outputs:\n");
  for (const jit::NamedValue& v : g.outputs) std::printf("  %s: %s\n", v.name.c_str(), g.type(v.value).str().c_str());
  std::printf("ops (%zu nodes):\n", g.nodes.size());
  for (const auto& [kind, count] : g.op_counts()) std::printf("  %-26s %lld\n", kind.c_str(), static_cast<long long>(count));
  std::map<std::string, int64_t> sub_counts;
  int64_t subgraphs = 0;
  count_subgraph_ops(g, sub_counts, subgraphs);
  if (subgraphs > 0) {
    std::printf("ops in %lld sub-graphs of control-flow nodes (a loop body counted once):\n", static_cast<long long>(subgraphs));
    for (const auto& [kind, count] : sub_counts) std::printf("  %-26s %lld\n", kind.c_str(), static_cast<long long>(count));
  }
  int64_t counts[3] = {0, 0, 0}, elems[3] = {0, 0, 0}, bytes = 0;
  for (const jit::Constant& c : g.constants) {
    int k = static_cast<int>(c.kind);
    ++counts[k];
    elems[k] += c.data.numel();
    bytes += c.data.nbytes();
  }
  std::printf("parameters: %lld in %lld tensors; buffers: %lld in %lld; inline constants: %lld in %lld (%s bytes)\n",
              static_cast<long long>(elems[0]), static_cast<long long>(counts[0]), static_cast<long long>(elems[1]),
              static_cast<long long>(counts[1]), static_cast<long long>(elems[2]), static_cast<long long>(counts[2]),
              human(static_cast<double>(bytes)).c_str());
  const auto in0 = g.inputs.empty() ? std::vector<int64_t>{} : g.type(g.inputs[0].value).sizes();
  const int64_t batch = in0.empty() || in0[0] == 0 ? 1 : in0[0];
  std::printf("FLOPs per sample (matmul, conv, recurrent layers): %s (traced batch %lld)\n",
              human(flops(g) / static_cast<double>(batch)).c_str(), static_cast<long long>(batch));
  std::vector<std::vector<int64_t>> traced_sizes;
  for (const jit::Value& v : g.values) traced_sizes.push_back(v.type.sizes());
  const jit::MemoryPlan plan = jit::plan_memory(g, traced_sizes);
  std::printf("memory plan (traced sizes): %s bytes of arena for %lld intermediates (%s bytes without reuse, %lld "
              "written in place)\n", human(static_cast<double>(plan.arena_bytes)).c_str(),
              static_cast<long long>(plan.planned_values), human(static_cast<double>(plan.unshared_bytes)).c_str(),
              static_cast<long long>(plan.in_place_values));
  // jit::propagate_layouts: which conv outputs stay blocked for the next conv.
  std::vector<std::string> blocked;
  int64_t convs = 0;
  for (const jit::Node& n : g.nodes) {
    if (n.kind != "conv2d") continue;
    ++convs;
    const jit::AttrValue* a = n.find("output_layout");
    const std::string* l = a ? std::get_if<std::string>(a) : nullptr;
    if (l && *l == "blocked") blocked.push_back(n.scope.empty() ? fmt::format("node {}", &n - g.nodes.data()) : n.scope);
  }
  if (!blocked.empty())
    std::printf("layouts: %zu of %lld conv2d outputs stay in oneDNN's blocked layout for the next conv (%s)\n",
                blocked.size(), static_cast<long long>(convs), fmt::format("{}", fmt::join(blocked, ", ")).c_str());
  else if (convs > 0)
    std::printf("layouts: every conv2d output is NCHW (no prepared conv feeds only prepared convs)\n");
  if (m.source.count("passes"))
    std::printf("passes (optimize level %s): %s\n", m.source.at("optimize").c_str(), m.source.at("passes").c_str());
  else if (m.source.count("optimize"))
    std::printf("passes: none (optimize level %s)\n", m.source.at("optimize").c_str());
  if (!m.source.empty()) {
    std::printf("source:\n");
    for (const auto& [k, v] : m.source) std::printf("  %s: %s\n", k.c_str(), v.c_str());
  }
  return kOk;
}

}  // namespace

JitCommands::JitCommands(CLI::App& app) {
  export_ = app.add_subcommand("export", "trace a trained run into a .ember model file and verify it");
  export_->add_option("target", target_, "RUN_DIR or CHECKPOINT")->required();
  export_->add_option("--checkpoint", checkpoint_, "which checkpoint of RUN_DIR: best or last")
      ->capture_default_str()
      ->check(CLI::IsMember({"best", "last"}));
  export_->add_option("-o,--output", output_, "the .ember file to write (default RUN_DIR/model.ember)");
  export_->add_option("--dynamic", dynamic_,
                      "dims that stay symbolic in the graph: batch (dim 0 of every input), seq (a text model's "
                      "sequence length), or batch,seq");
  export_->add_option("--optimize", optimize_, "graph passes: 0 none, 1 identities/constants/BatchNorm folding, 2 + activation fusion")
      ->capture_default_str()
      ->check(CLI::Range(0, jit::kMaxOptimizeLevel));
  export_->add_option("--format", format_, "ember (a .ember model) or onnx (an ONNX model)")
      ->capture_default_str()
      ->check(CLI::IsMember({"ember", "onnx"}));
  export_->add_option("--opset", opset_, "the ONNX opset of --format onnx")
      ->capture_default_str()
      ->check(CLI::Range(jit::kOnnxMinOpset, jit::kOnnxMaxOpset));
  export_->add_flag("--no-verify", no_verify_, "skip comparing the exported graph with the eager model");
  export_->add_option("--quantize", quantize_.mode,
                      "int8: dynamic (Linear/LSTM/GRU weights int8, activations per call) or static (conv and "
                      "linear layers int8, activation scales calibrated on training batches); checked by test accuracy")
      ->check(CLI::IsMember({"dynamic", "static"}));
  export_->add_option("--calibration-batches", quantize_.calibration_batches,
                      "training batches that calibrate --quantize static")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  export_->add_option("--observer", quantize_.observer, "--quantize static: how calibration picks each activation's range")
      ->capture_default_str()
      ->check(CLI::IsMember({"minmax", "moving_average", "histogram"}));
  export_->add_option("--keep-float", quantize_.keep_float,
                      "--quantize static: module paths whose layers stay float (e.g. conv1)");
  export_->add_option("--max-accuracy-drop", quantize_.max_accuracy_drop,
                      "with --quantize: fail when int8 test accuracy is more than this many points below float "
                      "(negative: int8 must beat float by that much)")
      ->capture_default_str();
  inspect_ = app.add_subcommand("inspect", "show a .ember model: inputs, outputs, ops, parameters, source run");
  inspect_->add_option("model", model_path_, "model.ember or model.onnx")->required();
}

std::optional<int> JitCommands::run() {
  if (*export_) return run_export(target_, checkpoint_, output_, !no_verify_, dynamic_, optimize_, format_, opset_, quantize_);
  if (*inspect_) return run_inspect(model_path_);
  return std::nullopt;
}

}  // namespace ember::cli
