// `ember board`: JSON endpoints over the run directories under a root and
// the page that draws them (board_page.cpp). Run directories are looked up
// by name among those list_runs finds, so a request never names a path.
#include "ember/serve/board.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "ember/ember.h"
#include "ember/train/runs.h"
#include "listener.h"

namespace ember::serve {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Run files are read up to this size: a run's own files stay far below it,
// and a huge or hostile file cannot exhaust memory.
constexpr size_t kMaxFileBytes = size_t{16} << 20;

std::optional<std::string> read_bounded(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text(kMaxFileBytes, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

std::vector<std::string> split_cells(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream s(line);
  std::string cell;
  while (std::getline(s, cell, ',')) out.push_back(cell);
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

json number_or_null(const std::string& cell) {
  if (cell.empty()) return nullptr;
  char* end = nullptr;
  const double v = std::strtod(cell.c_str(), &end);
  if (end == cell.c_str() || *end != '\0' || !std::isfinite(v)) return nullptr;
  return v;
}

void send(httplib::Response& res, int status, const std::string& body, const char* type = "application/json") {
  res.status = status;
  // The page polls: never show a stale copy.
  res.set_header("Cache-Control", "no-store");
  res.set_content(body, type);
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  send(res, status, json{{"error", message}}.dump());
}

}  // namespace

std::string board_csv_json(const std::string& text) {
  json columns = json::array(), rows = json::array();
  size_t start = 0;
  bool header = true;
  // Only lines that end in '\n': the last one of a file being written may be partial.
  for (size_t nl = text.find('\n'); nl != std::string::npos; start = nl + 1, nl = text.find('\n', start)) {
    std::string line = text.substr(start, nl - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::vector<std::string> cells = split_cells(line);
    if (header) {
      for (const std::string& c : cells) columns.push_back(c);
      header = false;
      continue;
    }
    if (cells.size() != columns.size()) continue;
    json row = json::array();
    for (const std::string& c : cells) row.push_back(number_or_null(c));
    rows.push_back(std::move(row));
  }
  return json{{"columns", columns}, {"rows", rows}}.dump();
}

struct Board::Impl {
  BoardOptions options;
  httplib::Server http;
  Listener listener{http, "board"};

  void routes();
  // The directory of the run named `name` under the root, or nullopt.
  std::optional<fs::path> run_dir(const std::string& name) const;
  void run_file(const httplib::Request& req, httplib::Response& res, const std::string& what);
};

std::optional<fs::path> Board::Impl::run_dir(const std::string& name) const {
  if (name.empty()) return std::nullopt;
  for (const train::RunSummary& r : train::list_runs(options.root))
    if (r.name == name) return fs::path(r.dir);
  return std::nullopt;
}

void Board::Impl::run_file(const httplib::Request& req, httplib::Response& res, const std::string& what) {
  const std::string name = req.get_param_value("run");
  const std::optional<fs::path> dir = run_dir(name);
  if (!dir) return send_error(res, 404, "no run named '" + name + "' under " + options.root);
  if (what == "metrics" || what == "steps") {
    const auto text = read_bounded(*dir / (what + ".csv"));
    return send(res, 200, board_csv_json(text.value_or("")));
  }
  if (what == "config") {
    const auto text = read_bounded(*dir / "config.yaml");
    return send(res, 200, json{{"yaml", text.value_or("")}}.dump());
  }
  // confusion: written by the trainer with the test metrics (confusion.json).
  const auto text = read_bounded(*dir / "confusion.json");
  json j = text ? json::parse(*text, nullptr, false) : json();
  if (j.is_discarded()) j = nullptr;  // being written, or not ours
  send(res, 200, json{{"confusion", j}}.dump());
}

void Board::Impl::routes() {
  http.Get("/", [](const httplib::Request&, httplib::Response& res) {
    send(res, 200, board_page(), "text/html; charset=utf-8");
  });
  http.Get("/api/runs", [this](const httplib::Request&, httplib::Response& res) {
    send(res, 200, train::runs_json(train::list_runs(options.root)));
  });
  for (const char* what : {"metrics", "steps", "config", "confusion"})
    http.Get(std::string("/api/") + what,
             [this, what](const httplib::Request& req, httplib::Response& res) { run_file(req, res, what); });
}

Board::Board(BoardOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  EMBER_CHECK(fs::is_directory(impl_->options.root),
              "board: '{}' is not a folder (runs go to log.root, by default runs/)", impl_->options.root);
  // stop() waits for every worker: keep idle keep-alive connections short.
  impl_->http.set_keep_alive_timeout(2);
  impl_->routes();
}

Board::~Board() { stop(); }

int Board::bind() { return impl_->listener.bind(impl_->options.host, impl_->options.port); }

void Board::serve() { impl_->listener.serve(); }

void Board::stop() { impl_->listener.stop(); }

}  // namespace ember::serve
