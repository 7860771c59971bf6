// ember infer model.ember INPUT... [--batch-size N] [-o out.csv]
//   Inputs: image files (PNG, JPEG, BMP, GIF, TGA: by extension, or by their
//   first bytes), IDX (raw or gzip), CSV rows of numbers (a non-numeric first
//   row is a header), .safetensors (the one tensor, or the one named like the
//   graph input) or .npy; several files are concatenated along dim 0. Images,
//   and uint8 image data ([N, H, W] as IDX holds, or [N, H, W, C]), go through
//   the transform the run evaluated with, recorded by `ember export` as source
//   "input_transform" (decode, resize, ToTensor, Normalize); image files need
//   it. Without one, uint8 data is only scaled by 1/255. CSV rows given to a
//   model of a CSV run go through the standardisation it trained with
//   (input_transform of kind "standardize"). Each sample is
//   reshaped to the input's per-sample shape when the element count matches.
//   Prints the predictions (argmax, with class names when the file records
//   them, and the image file's name) and the throughput; -o writes every row.
// ember bench dist [--simulate] [--steps N]   (apps/ember/dist_bench_command.cpp)
// ember bench model.ember [--batch-sizes 1,8,64,256] [--threads 1,2] [--optimize 1,2] [--seconds S]
//   Latency p50/p90/p99 and throughput per optimisation level, thread count
//   and batch size on random inputs of the signature, then a recommendation
//   line. Levels below the file's own cannot be undone and are skipped; the
//   default is the file's level alone.
#include "runtime_commands.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "dist_bench_command.h"
#include "ember/core/parallel.h"
#include "ember/data/datasets/csv.h"
#include "ember/data/datasets/idx.h"
#include "ember/data/image_preprocess.h"
#include "ember/ember.h"
#include "ember/io/npy.h"
#include "ember/io/safetensors.h"
#include "ember/jit/passes/optimize.h"
#include "ember/runtime/session.h"

namespace ember::cli {

namespace fs = std::filesystem;

namespace {

constexpr int kOk = 0;

std::string lower_ext(const std::string& path) {
  std::string e = fs::path(path).extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return e;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

// Comma-separated integers, each at least `min`.
std::vector<int64_t> int_list(const std::string& s, const char* what, int64_t min = 1) {
  std::vector<int64_t> out;
  for (const std::string& item : split(s, ',')) {
    size_t used = 0;
    int64_t v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    EMBER_CHECK(used == item.size() && v >= min, "bench: {} '{}': '{}' is not {}", what, s, item,
                min == 1 ? "a positive integer" : "an integer >= 0");
    out.push_back(v);
  }
  EMBER_CHECK(!out.empty(), "bench: {} is empty", what);
  return out;
}

// CSV rows of numbers -> float32 [rows, cols]; a first row that does not parse
// is taken as a header.
Tensor read_csv_rows(const std::string& path) {
  std::ifstream in(path);
  EMBER_CHECK(in.good(), "infer: cannot open '{}'", path);
  return data::parse_csv_numbers(in, "infer: " + path);
}

Tensor read_input_file(const std::string& path, const std::string& input_name) {
  EMBER_CHECK(fs::exists(path), "infer: input '{}' does not exist", path);
  const std::string ext = lower_ext(path);
  if (ext == ".csv") return read_csv_rows(path);
  if (ext == ".npy") return io::load_npy(path);
  if (ext == ".safetensors") {
    auto d = safetensors::load_file(path);
    if (d.size() == 1) return d.begin()->second;
    for (const auto& [name, t] : d)
      if (name == input_name) return t;
    EMBER_ERROR("infer: '{}' holds {} tensors and none is named '{}' (the model's input)", path, d.size(),
                input_name);
  }
  return data::read_idx(path);  // .idx, *-ubyte, .gz: the header decides
}

// By extension, or by the first bytes (PNG, JPEG, GIF, BMP) for a file named otherwise.
bool is_image_file(const std::string& path) {
  static const std::vector<std::string> extensions = {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tga"};
  if (std::find(extensions.begin(), extensions.end(), lower_ext(path)) != extensions.end()) return true;
  std::ifstream f(path, std::ios::binary);
  std::array<unsigned char, 4> b{};
  f.read(reinterpret_cast<char*>(b.data()), static_cast<std::streamsize>(b.size()));
  if (f.gcount() < 4) return false;
  const bool png = b[0] == 0x89 && b[1] == 'P' && b[2] == 'N' && b[3] == 'G';
  const bool jpeg = b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF;
  const bool gif = b[0] == 'G' && b[1] == 'I' && b[2] == 'F' && b[3] == '8';
  return png || jpeg || gif || (b[0] == 'B' && b[1] == 'M');
}

// A CSV run's standardisation, if `ember export` recorded one.
std::optional<data::Standardizer> recorded_standardizer(const jit::ModelFile& m, const std::string& model_path) {
  auto it = m.source.find("input_transform");
  if (it == m.source.end() || !data::Standardizer::is_standardize_json(it->second)) return std::nullopt;
  return data::Standardizer::from_json(it->second, model_path);
}

// The image transform `ember export` recorded, or none (a model exported without it,
// or from data that is not images).
std::optional<data::ImagePreprocess> recorded_transform(const jit::ModelFile& m, const std::string& model_path) {
  auto it = m.source.find("input_transform");
  if (it == m.source.end() || recorded_standardizer(m, model_path)) return std::nullopt;
  return data::ImagePreprocess::from_json(it->second, model_path);
}

// uint8 images [N, H, W] (one channel, as IDX holds them) or [N, H, W, C] with
// the transform's channels: what the transform applies to, one at a time.
bool is_image_batch(const Tensor& t, const data::ImagePreprocess& pre) {
  return t.scalar_type() == kUInt8 &&
         ((t.dim() == 3 && pre.channels == 1) || (t.dim() == 4 && t.size(3) == pre.channels));
}

Tensor preprocess_each(const Tensor& images, const data::ImagePreprocess& pre) {
  std::vector<Tensor> out;
  for (int64_t i = 0; i < images.size(0); ++i) out.push_back(pre(images.select(0, i)));
  return stack(out, 0);
}

// Data [N, ...] -> the input's dtype and per-sample shape.
Tensor to_input(Tensor t, const jit::TensorType& want, const std::string& path) {
  EMBER_CHECK(t.dim() >= 1, "infer: '{}' holds a scalar, expected samples along dim 0 for input {}", path, want.str());
  if (t.scalar_type() == kUInt8 && is_floating_point(want.dtype)) t = div(t.to(want.dtype), Scalar(255.0));
  else if (t.scalar_type() != want.dtype) t = t.to(want.dtype);
  std::vector<int64_t> shape = {t.size(0)};
  int64_t per = 1;
  for (size_t i = 1; i < want.shape.size(); ++i) {
    EMBER_CHECK(!want.shape[i].is_symbolic(), "infer: input {} has a symbolic dim {} past the batch; give a "
                "tensor of that exact shape", want.str(), i);
    shape.push_back(want.shape[i].size);
    per *= want.shape[i].size;
  }
  if (t.dim() != static_cast<int64_t>(want.shape.size()) || t.sizes().vec() != shape) {
    EMBER_CHECK(t.numel() == t.size(0) * per, "infer: '{}' has samples of {} elements (shape {}), input {} needs {}",
                path, t.size(0) == 0 ? 0 : t.numel() / t.size(0), fmt::format("{}", t.sizes().vec()), want.str(), per);
    t = t.contiguous().reshape(shape);
  }
  return t.contiguous();
}

// Every file's samples as the model's input, concatenated; `origin` gets each
// sample's image file name (empty for other files).
Tensor read_inputs(const std::vector<std::string>& paths, const jit::ModelFile& model, const std::string& model_path,
                   const jit::TensorType& want, std::vector<std::string>& origin) {
  const std::optional<data::ImagePreprocess> pre = recorded_transform(model, model_path);
  const std::optional<data::Standardizer> standardize = recorded_standardizer(model, model_path);
  std::vector<Tensor> parts;
  for (const std::string& p : paths) {
    EMBER_CHECK(fs::exists(p), "infer: input '{}' does not exist", p);
    const bool image = is_image_file(p);
    Tensor t;
    if (image) {
      EMBER_CHECK(pre, "infer: '{}' is an image, but '{}' records no input transform (source key input_transform: "
                  "the channels, size and normalisation its run evaluated with), so it cannot be turned into the "
                  "model's input {}; export the run again with this Ember, or give the input preprocessed as .npy "
                  "or .safetensors", p, model_path, want.str());
      t = pre->load(p).unsqueeze(0);
    } else {
      t = read_input_file(p, model.graph.inputs[0].name);
      if (pre && is_image_batch(t, *pre)) t = preprocess_each(t, *pre);
      // CSV rows are raw features; the run trained on them standardised.
      if (standardize && lower_ext(p) == ".csv") t = standardize->apply(t);
    }
    parts.push_back(to_input(t, want, p));
    origin.resize(origin.size() + static_cast<size_t>(t.size(0)), image ? fs::path(p).filename().string() : "");
  }
  return parts.size() == 1 ? parts[0] : cat(parts, 0);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int run_infer(const std::string& model_path, const std::vector<std::string>& inputs, int64_t batch_size,
              const std::string& output) {
  EMBER_CHECK(batch_size > 0, "infer: --batch-size must be positive, got {}", batch_size);
  runtime::Session s(model_path);
  const jit::Graph& g = s.model().graph;
  EMBER_CHECK(g.inputs.size() == 1, "infer: the model has {} inputs; ember infer feeds one (use runtime::Session "
              "for more)", g.inputs.size());
  const jit::TensorType want = g.type(g.inputs[0].value);
  EMBER_CHECK(!want.shape.empty(), "infer: input {} is a scalar", want.str());
  std::vector<std::string> origin;  // per sample: its image file's name, or empty
  Tensor x = read_inputs(inputs, s.model(), model_path, want, origin);
  const int64_t n = x.size(0);
  // A graph traced with a fixed batch runs only at that size: pad the last batch.
  const bool fixed_batch = !want.shape[0].is_symbolic();
  if (fixed_batch) batch_size = want.shape[0].size;
  std::vector<std::string> names;
  auto cn = s.model().source.find("class_names");
  if (cn != s.model().source.end()) names = split(cn->second, ',');

  std::vector<Tensor> outs;
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < n; i += batch_size) {
    const int64_t len = std::min(batch_size, n - i);
    Tensor b = x.narrow(0, i, len).contiguous();
    if (fixed_batch && len < batch_size) {
      std::vector<int64_t> pad_shape = b.sizes().vec();
      pad_shape[0] = batch_size - len;
      b = cat({b, zeros(pad_shape, TensorOptions().dtype(want.dtype))}, 0);
    }
    Tensor y = s.run(std::vector<Tensor>{b})[0];
    outs.push_back(y.narrow(0, 0, len).contiguous());
  }
  const double secs = seconds_since(t0);
  Tensor y = outs.size() == 1 ? outs[0] : cat(outs, 0);
  const bool classify = y.dim() == 2 && is_floating_point(y.scalar_type());
  Tensor yf = y.to(kFloat32).contiguous();
  std::vector<float> yv = yf.to_vector<float>();
  const int64_t cols = yf.numel() / std::max<int64_t>(n, 1);
  std::vector<int64_t> pred;
  if (classify) pred = argmax(yf, 1).to(kInt64).to_vector<int64_t>();
  auto label = [&](int64_t c) { return c < static_cast<int64_t>(names.size()) ? names[c] : std::to_string(c); };

  const int64_t shown = std::min<int64_t>(n, 10);
  for (int64_t i = 0; i < shown; ++i) {
    const std::string& from = origin[static_cast<size_t>(i)];
    const std::string what = classify ? label(pred[i])
                                      : fmt::format("{}", std::vector<float>(yv.begin() + i * cols,
                                                                             yv.begin() + (i + 1) * cols));
    const std::string file = from.empty() ? "" : "  (" + from + ")";
    std::printf("%lld: %s%s\n", static_cast<long long>(i), what.c_str(), file.c_str());
  }
  if (n > shown) std::printf("... (%lld more%s)\n", static_cast<long long>(n - shown), output.empty() ? "; -o F writes all" : "");
  if (!output.empty()) {
    std::ofstream f(output);
    EMBER_CHECK(f.good(), "infer: cannot write '{}'", output);
    f << "index" << (classify ? ",prediction,class" : "");
    for (int64_t c = 0; c < cols; ++c) f << ",out" << c;
    f << "\n";
    for (int64_t i = 0; i < n; ++i) {
      f << i;
      if (classify) f << "," << pred[i] << "," << label(pred[i]);
      for (int64_t c = 0; c < cols; ++c) f << "," << fmt::format("{}", yv[i * cols + c]);
      f << "\n";
    }
    EMBER_CHECK(f.good(), "infer: writing '{}' failed", output);
  }
  std::printf("%lld samples in %.3f s: %.1f samples/s (batch %lld, %d threads)\n", static_cast<long long>(n), secs,
              secs > 0 ? static_cast<double>(n) / secs : 0.0, static_cast<long long>(batch_size), get_num_threads());
  return kOk;
}

Tensor random_input(const jit::TensorType& t, int64_t batch) {
  std::vector<int64_t> shape = t.sizes();
  if (!shape.empty()) shape[0] = batch;
  if (is_floating_point(t.dtype)) return randn(shape).to(t.dtype);
  return zeros(shape, TensorOptions().dtype(t.dtype));  // index inputs: 0 is valid for every table
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5));
  return v[i];
}

// The optimisation level recorded in the file (0 when it has none).
int file_level(const jit::ModelFile& m) {
  auto it = m.source.find("optimize");
  if (it == m.source.end()) return 0;
  int level = 0;
  auto [ptr, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), level);
  return ec == std::errc() && ptr == it->second.data() + it->second.size() ? level : 0;
}

int run_bench(const std::string& model_path, const std::string& batch_list, const std::string& thread_list,
              const std::string& level_list, double seconds) {
  EMBER_CHECK(seconds > 0, "bench: --seconds must be positive, got {}", seconds);
  const std::vector<int64_t> batches = int_list(batch_list, "--batch-sizes");
  const std::vector<int64_t> threads = int_list(thread_list, "--threads");
  const jit::ModelFile model = jit::load_model(model_path);
  const int own = file_level(model);
  std::vector<int64_t> levels = level_list.empty() ? std::vector<int64_t>{own} : int_list(level_list, "--optimize", 0);
  for (int64_t l : levels)
    EMBER_CHECK(l <= jit::kMaxOptimizeLevel, "bench: --optimize {} is not a level (0 to {})", l,
                jit::kMaxOptimizeLevel);
  const jit::Graph& g = model.graph;
  std::printf("%s: backend: Ember kernels (oneDNN for convolutions and GEMMs) through the graph interpreter; "
              "the file is at optimize level %d\n", model_path.c_str(), own);
  std::printf("%6s %8s %8s %12s %12s %12s %14s\n", "level", "threads", "batch", "p50 ms", "p90 ms", "p99 ms",
              "samples/s");
  struct Row { int64_t level, threads, batch; double p50, thr; };
  std::vector<Row> rows;
  for (int64_t level : levels) {
    if (level < own) {
      std::printf("%6lld   (skipped: the file is already optimised at level %d)\n", static_cast<long long>(level), own);
      continue;
    }
    jit::ModelFile variant = model;
    if (level > own) variant.graph = jit::optimize(model.graph, static_cast<int>(level)).graph;
    runtime::Session s(std::move(variant));
    for (int64_t th : threads) {
      set_num_threads(static_cast<int>(th));
      for (int64_t b : batches) {
        std::vector<Tensor> in;
        bool ok = true;
        for (const jit::NamedValue& v : g.inputs) {
          const jit::TensorType t = g.type(v.value);
          if (!t.shape.empty() && !t.shape[0].is_symbolic() && t.shape[0].size != b) ok = false;
          in.push_back(random_input(t, b));
        }
        if (!ok) {
          std::printf("%6lld %8lld %8lld   (skipped: the graph's batch dim is fixed; export with --dynamic batch)\n",
                      static_cast<long long>(level), static_cast<long long>(th), static_cast<long long>(b));
          continue;
        }
        for (int w = 0; w < 3; ++w) s.run(in);  // warm-up: caches, oneDNN primitives, the arena
        std::vector<double> lat;
        auto start = std::chrono::steady_clock::now();
        while (lat.size() < 10 || (seconds_since(start) < seconds && lat.size() < 100000)) {
          auto t0 = std::chrono::steady_clock::now();
          s.run(in);
          lat.push_back(seconds_since(t0) * 1e3);
        }
        const double p50 = percentile(lat, 0.5), thr = static_cast<double>(b) / (p50 / 1e3);
        std::printf("%6lld %8lld %8lld %12.3f %12.3f %12.3f %14.1f\n", static_cast<long long>(level),
                    static_cast<long long>(th), static_cast<long long>(b), p50, percentile(lat, 0.9),
                    percentile(lat, 0.99), thr);
        rows.push_back({level, th, b, p50, thr});
      }
    }
  }
  EMBER_CHECK(!rows.empty(), "bench: nothing could run (the graph's batch dim is fixed at {}, or every level was "
                             "below the file's {})",
              g.inputs.empty() ? 0 : g.type(g.inputs[0].value).shape.at(0).size, own);
  const Row* best_thr = &rows[0];
  const Row* best_lat = &rows[0];
  for (const Row& r : rows) {
    if (r.thr > best_thr->thr) best_thr = &r;
    if (r.batch < best_lat->batch || (r.batch == best_lat->batch && r.p50 < best_lat->p50)) best_lat = &r;
  }
  std::printf("recommendation: for throughput use batch %lld with %lld threads at level %lld (%.1f samples/s); for "
              "latency use batch %lld with %lld threads at level %lld (p50 %.3f ms). Measured here; rerun on the "
              "deployment machine.\n",
              static_cast<long long>(best_thr->batch), static_cast<long long>(best_thr->threads),
              static_cast<long long>(best_thr->level), best_thr->thr, static_cast<long long>(best_lat->batch),
              static_cast<long long>(best_lat->threads), static_cast<long long>(best_lat->level), best_lat->p50);
  return kOk;
}

}  // namespace

RuntimeCommands::RuntimeCommands(CLI::App& app) {
  infer_ = app.add_subcommand("infer", "run a .ember model on image files, IDX, CSV, .safetensors or .npy inputs");
  infer_->add_option("model", model_, "model.ember")->required();
  infer_->add_option("inputs", inputs_, "input files, concatenated along dim 0")->required();
  infer_->add_option("--batch-size", batch_size_, "samples per run")->capture_default_str();
  infer_->add_option("-o,--output", output_, "write every prediction to this CSV file");
  bench_ = app.add_subcommand("bench", "latency percentiles and throughput of a .ember model");
  bench_->add_option("model", model_, "model.ember")->required();
  bench_->add_option("--batch-sizes", batch_sizes_, "comma-separated batch sizes")->capture_default_str();
  bench_->add_option("--threads", threads_, "comma-separated thread counts")->capture_default_str();
  bench_->add_option("--optimize", levels_,
                     "comma-separated optimisation levels to compare (default: the file's own; lower ones are "
                     "skipped)");
  bench_->add_option("--seconds", seconds_, "time per configuration")->capture_default_str();
  // `ember bench dist`: the data-parallel benchmark (issue 18).
  bench_->add_flag("--simulate", simulate_, "with model 'dist': replay one rank's step with modeled communication");
  bench_->add_option("--steps", steps_, "with model 'dist': measured steps per model")->capture_default_str();
}

std::optional<int> RuntimeCommands::run() {
  if (*infer_) return run_infer(model_, inputs_, batch_size_, output_);
  if (*bench_ && model_ == "dist") return run_dist_bench(simulate_, steps_);
  if (*bench_) return run_bench(model_, batch_sizes_, threads_, levels_, seconds_);
  return std::nullopt;
}

}  // namespace ember::cli
