// The HTTP side of `ember serve`: routes of the v2 protocol on cpp-httplib,
// each inference handler parses and checks its request, queues it on the
// model's batcher and waits for its rows of the outputs.
#include "ember/serve/server.h"

// httplib's default listen backlog (5) drops the SYNs of a burst of new
// connections; each dropped one costs its client a 1 s retransmit.
#define CPPHTTPLIB_LISTEN_BACKLOG 1024
#include <httplib.h>

#include <cstdlib>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ember/ember.h"
#include "listener.h"
#include "metrics.h"
#include "model_worker.h"
#include "protocol.h"

namespace ember::serve {

using nlohmann::json;

struct Server::Impl {
  ServerOptions options;
  Metrics metrics;
  std::map<std::string, std::unique_ptr<ModelWorker>> models;
  std::vector<std::string> names;  // in command-line order
  httplib::Server http;
  Listener listener{http, "serve"};

  void load(const std::vector<std::string>& paths);
  void routes();
  ModelWorker& model(const std::string& name);
  void infer(const httplib::Request& req, httplib::Response& res);
  void predict(const httplib::Request& req, httplib::Response& res);
  // Queues the inputs on the model's batcher and waits up to --timeout-ms.
  std::vector<Tensor> run(ModelWorker& m, std::vector<Tensor> inputs);
};

namespace {

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  send_json(res, status, json{{"error", message}});
  // Backpressure: a full queue empties within a batch or two.
  if (status == 503) res.set_header("Retry-After", "1");
}

// The binary data extension's header: where the JSON part of the body ends.
std::optional<size_t> json_length(const httplib::Request& req) {
  if (!req.has_header("Inference-Header-Content-Length")) return std::nullopt;
  const std::string v = req.get_header_value("Inference-Header-Content-Length");
  if (v.empty() || v.size() > 18 || v.find_first_not_of("0123456789") != std::string::npos)
    throw HttpError(400, fmt::format("Inference-Header-Content-Length: expected a byte count, got '{}'", v));
  return std::stoull(v);
}

}  // namespace

void Server::Impl::load(const std::vector<std::string>& paths) {
  EMBER_CHECK(!paths.empty(), "serve: no model given; pass one or more .ember files");
  BatchOptions b{options.max_batch, options.max_delay_us, options.queue, options.threads};
  for (const std::string& path : paths) {
    std::string name = std::filesystem::path(path).stem().string();
    EMBER_CHECK(!models.count(name), "serve: two models named '{}' (the file stem names a model); rename one of them",
                name);
    auto start = std::chrono::steady_clock::now();
    models.emplace(name, std::make_unique<ModelWorker>(name, path, b, metrics));
    metrics.set_load_seconds(name, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    names.push_back(name);
  }
}

ModelWorker& Server::Impl::model(const std::string& name) {
  auto it = models.find(name);
  if (it == models.end())
    throw HttpError(404, fmt::format("unknown model '{}'; serving {}", name, fmt::join(names, ", ")));
  return *it->second;
}

void Server::Impl::infer(const httplib::Request& req, httplib::Response& res) {
  auto start = std::chrono::steady_clock::now();
  ModelWorker& m = model(req.matches[1]);
  InferRequest request = parse_infer(req.body, m.signature(), json_length(req));
  std::vector<Tensor> outputs = run(m, std::move(request.inputs));
  if (request.binary_output) {
    BinaryResponse b = infer_response_binary(m.name(), m.signature(), outputs);
    res.status = 200;
    res.set_header("Inference-Header-Content-Length", std::to_string(b.json_length));
    res.set_content(b.body, "application/octet-stream");
  } else {
    send_json(res, 200, infer_response(m.name(), m.signature(), outputs));
  }
  metrics.observe_latency(m.name(), std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

// An image file or CSV rows, raw or as the file of a multipart form (curl -F
// file=@x.png); top-k classes with probabilities (predict.h).
void Server::Impl::predict(const httplib::Request& req, httplib::Response& res) {
  auto start = std::chrono::steady_clock::now();
  ModelWorker& m = model(req.matches[1]);
  const int64_t top_k = req.has_param("top_k") ? parse_top_k(req.get_param_value("top_k")) : 5;
  PredictBody body{req.body, req.get_header_value("Content-Type"), "body"};
  if (req.is_multipart_form_data()) {
    if (req.files.empty())
      throw HttpError(400, "predict: the multipart form has no file; send one as field \"file\" (curl -F file=@image.png)");
    // A reference into req.files: the body's bytes stay in the request.
    auto it = req.files.find("file");
    const httplib::MultipartFormData& f = (it != req.files.end() ? it : req.files.begin())->second;
    body = PredictBody{f.content, f.content_type, f.filename.empty() ? "form field '" + f.name + "'" : f.filename};
  }
  PredictInput in = predict_input(body, m.predict_info(), m.signature(), m.name());
  std::vector<Tensor> outputs = run(m, {in.input});
  send_json(res, 200, predict_response(m.name(), in.kind, outputs.at(0), m.predict_info(), top_k));
  metrics.observe_latency(m.name(), std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

std::vector<Tensor> Server::Impl::run(ModelWorker& m, std::vector<Tensor> inputs) {
  ModelWorker::Ticket ticket = m.submit(std::move(inputs));
  if (ticket.result.wait_for(std::chrono::milliseconds(options.timeout_ms)) != std::future_status::ready) {
    // Still queued: removed, never run. Already taken into a batch: it runs
    // with the others (its rows cannot be taken back) and nobody reads it.
    const bool cancelled = m.cancel(ticket.id);
    throw HttpError(504, fmt::format("model '{}' did not answer within {} ms (--timeout-ms){}", m.name(),
                                     options.timeout_ms, cancelled ? "; the request was not run" : ""));
  }
  try {
    return ticket.result.get();
  } catch (const Error& e) {
    // The signature check passed, so this is a shape the graph itself rejects.
    throw HttpError(400, e.what());
  }
}

void Server::Impl::routes() {
  // Handlers throw HttpError; everything else is a 500 with its message.
  auto guarded = [](auto handler) {
    return [handler](const httplib::Request& req, httplib::Response& res) {
      try {
        handler(req, res);
      } catch (const HttpError& e) {
        send_error(res, e.status(), e.what());
      } catch (const std::exception& e) {
        send_error(res, 500, e.what());
      }
    };
  };
  http.Get("/v2/health/live", [](const httplib::Request&, httplib::Response& res) { send_json(res, 200, json::object()); });
  http.Get("/v2/health/ready", [](const httplib::Request&, httplib::Response& res) { send_json(res, 200, json::object()); });
  http.Get("/v2", [](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, json{{"name", "ember"}, {"version", version()}, {"extensions", json::array()}});
  });
  http.Get(R"(/v2/models/([^/]+))", guarded([this](const httplib::Request& req, httplib::Response& res) {
    ModelWorker& m = model(req.matches[1]);
    send_json(res, 200, model_metadata(m.name(), m.signature()));
  }));
  http.Get(R"(/v2/models/([^/]+)/ready)", guarded([this](const httplib::Request& req, httplib::Response& res) {
    send_json(res, 200, json{{"name", model(req.matches[1]).name()}, {"ready", true}});
  }));
  http.Post(R"(/v2/models/([^/]+)/infer)",
            guarded([this](const httplib::Request& req, httplib::Response& res) { infer(req, res); }));
  http.Post(R"(/v1/models/([^/]+)/predict)",
            guarded([this](const httplib::Request& req, httplib::Response& res) { predict(req, res); }));
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    std::string page = metrics.text(names, [this](const std::string& n) { return models.at(n)->queue_depth(); });
    res.set_content(page, "text/plain; version=0.0.4");
  });
  // Every answer, including httplib's own 404 and 413, is counted here.
  http.set_logger([this](const httplib::Request&, const httplib::Response& res) { metrics.count_request(res.status); });
  http.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 413)
      send_error(res, 413, fmt::format("request body larger than --max-body ({} bytes)", options.max_body));
    else if (res.status == 404)
      send_error(res, 404, fmt::format("no route {} {}", req.method, req.path));
  });
}

Server::Server(const std::vector<std::string>& model_paths, ServerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  const ServerOptions& o = impl_->options;
  EMBER_CHECK(o.http_threads >= 1, "serve: --http-threads must be at least 1, got {}", o.http_threads);
  EMBER_CHECK(o.timeout_ms >= 1, "serve: --timeout-ms must be at least 1, got {}", o.timeout_ms);
  impl_->load(model_paths);
  impl_->http.set_payload_max_length(o.max_body);
  // An idle keep-alive connection holds its worker until this timeout, and
  // stop() waits for every worker: keep it short so shutdown is prompt.
  impl_->http.set_keep_alive_timeout(2);
  // A response leaves as a header write and a body write; with Nagle's
  // algorithm on, the body waits for the client's (delayed, ~40 ms) ACK of
  // the header: every keep-alive request took 40+ ms at concurrency 1.
  impl_->http.set_tcp_nodelay(true);
  // httplib closes a keep-alive connection after 5 requests by default; a
  // client then reconnects and waits for a free HTTP thread.
  impl_->http.set_keep_alive_max_count(100000);
  int n = o.http_threads;
  impl_->http.new_task_queue = [n] { return new httplib::ThreadPool(static_cast<size_t>(n)); };
  impl_->routes();
}

Server::~Server() {
  stop();
}

int Server::bind() { return impl_->listener.bind(impl_->options.host, impl_->options.port); }

void Server::serve() { impl_->listener.serve(); }

void Server::stop() { impl_->listener.stop(); }

bool Server::running() const { return impl_->http.is_running(); }

std::string Server::summary() const {
  const ServerOptions& o = impl_->options;
  std::string out;
  for (const std::string& name : impl_->names) {
    const ModelWorker& m = *impl_->models.at(name);
    const Signature& s = m.signature();
    std::vector<std::string> in, outs;
    for (size_t i = 0; i < s.input_names.size(); ++i) in.push_back(s.input_names[i] + ": " + signature_str(s.input_types[i]));
    for (size_t i = 0; i < s.output_names.size(); ++i) outs.push_back(s.output_names[i] + ": " + signature_str(s.output_types[i]));
    std::string padding;
    if (s.seq.active())
      padding = fmt::format("; sequences (dim 1) padded{}, lengths in '{}'",
                            s.seq.symbol.empty() ? " to the traced length" : " to the longest of a batch",
                            s.input_names[static_cast<size_t>(s.seq.lengths_input)]);
    out += fmt::format("model {}: ({}) -> ({}); {}{}\n", name, fmt::join(in, ", "), fmt::join(outs, ", "),
                       m.batches() ? "batched along dim 0" : "one request at a time (no symbolic batch dim)", padding);
  }
  out += fmt::format(
      "batching: max-batch {} rows, max-delay {} us, queue {} requests; {} HTTP threads, max body {} bytes, timeout {} ms\n",
      o.max_batch, o.max_delay_us, o.queue, o.http_threads, o.max_body, o.timeout_ms);
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  out += fmt::format("OpenMP wait policy: {}\n", policy ? policy : "the runtime's default (spinning)");
  return out;
}

size_t parse_byte_size(const std::string& text) {
  static const std::pair<const char*, size_t> kUnits[] = {
      {"GiB", size_t{1} << 30}, {"MiB", size_t{1} << 20}, {"KiB", size_t{1} << 10}, {"G", 1000000000},
      {"M", 1000000},          {"K", 1000},              {"B", 1}};
  size_t unit = 1, digits = text.size();
  for (const auto& [suffix, scale] : kUnits) {
    std::string s(suffix);
    if (text.size() > s.size() && text.compare(text.size() - s.size(), s.size(), s) == 0) {
      unit = scale, digits = text.size() - s.size();
      break;
    }
  }
  std::string number = text.substr(0, digits);
  EMBER_CHECK(!number.empty() && number.find_first_not_of("0123456789") == std::string::npos && number.size() < 12,
              "expected a size such as 16MiB, 512KiB or 1000000, got '{}'", text);
  return std::stoull(number) * unit;
}

}  // namespace ember::serve
