// `ember board`: JSON endpoints over the run directories under a root and
// the page that draws them (board_page.cpp). Run directories are looked up
// by name among those list_runs finds, so a request never names a path.
//
// Note [board increments]: the page polls every 2 s, and a long run's
// steps.csv grows to megabytes, so it asks for what is new only. Every file
// answer carries the file's `id` (device and inode: the trainer appends to
// steps.csv in place and replaces metrics.csv and confusion.json with a
// rename, so a new id means new content) and, for CSV files, `next`, the
// byte after the last complete row sent. A request naming the current id
// gets the rows after `from` (`append`: true); any other gets the file from
// its start. An answer holds at most chunk_bytes of rows (`more`: true when
// the file goes on), so no file is cut off, however long. JSON files answer
// `unchanged` when the id and the modification time are the client's.
#include "ember/serve/board.h"

#include <httplib.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
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

// JSON and YAML run files are read up to this size: a run's own files stay
// far below it, and a huge or hostile file cannot exhaust memory.
constexpr size_t kMaxFileBytes = size_t{16} << 20;
// A CSV header longer than this is not a run's (it is read on every request).
constexpr size_t kMaxHeaderBytes = size_t{64} << 10;

// Up to `max` bytes of p from byte `offset`.
std::optional<std::string> read_range(const fs::path& p, size_t offset, size_t max) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  in.seekg(static_cast<std::streamoff>(offset));
  if (!in) return std::string();
  std::string text(max, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

std::optional<std::string> read_bounded(const fs::path& p) { return read_range(p, 0, kMaxFileBytes); }

// What a client is told to recognise a file by (Note [board increments]).
struct FileVersion {
  std::string id;       // device and inode
  std::string changed;  // id, size and modification time
  size_t size = 0;
};

std::optional<FileVersion> file_version(const fs::path& p) {
  struct stat st{};
  if (::stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  FileVersion v;
  v.id = fmt::format("{:x}-{:x}", static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino));
  v.changed = fmt::format("{}-{:x}-{:x}.{:x}", v.id, static_cast<uint64_t>(st.st_size),
                          static_cast<uint64_t>(st.st_mtim.tv_sec), static_cast<uint64_t>(st.st_mtim.tv_nsec));
  v.size = static_cast<size_t>(st.st_size);
  return v;
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

// The complete lines of `text` (those that end in '\n': the last one of a
// file being written may be partial) as cells; returns the bytes they span.
size_t complete_lines(const std::string& text, const std::function<void(std::vector<std::string>)>& each) {
  size_t start = 0;
  for (size_t nl = text.find('\n'); nl != std::string::npos; start = nl + 1, nl = text.find('\n', start)) {
    std::string line = text.substr(start, nl - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) each(split_cells(line));
  }
  return start;
}

// A row of numbers (null for cells that are not), or nothing when the row
// has not as many cells as the header.
void append_row(json& rows, const std::vector<std::string>& cells, size_t columns) {
  if (cells.size() != columns) return;
  json row = json::array();
  for (const std::string& c : cells) row.push_back(number_or_null(c));
  rows.push_back(std::move(row));
}

}  // namespace

std::string board_csv_json(const std::string& text) {
  json columns = json::array(), rows = json::array();
  bool header = true;
  complete_lines(text, [&](const std::vector<std::string>& cells) {
    if (header) {
      for (const std::string& c : cells) columns.push_back(c);
      header = false;
    } else {
      append_row(rows, cells, columns.size());
    }
  });
  return json{{"columns", columns}, {"rows", rows}}.dump();
}

namespace {

// The answer for a CSV run file (Note [board increments]): its columns and
// the rows from byte `from` on when `id` is the file's, else from its start.
json csv_increment(const fs::path& p, const std::string& id, size_t from, size_t chunk_bytes) {
  json out = {{"id", ""}, {"columns", json::array()}, {"rows", json::array()}, {"next", 0},
              {"append", false}, {"more", false}};
  const std::optional<FileVersion> v = file_version(p);
  if (!v) return out;
  out["id"] = v->id;
  const std::optional<std::string> head = read_range(p, 0, kMaxHeaderBytes);
  const size_t header_end = head ? head->find('\n') : std::string::npos;
  if (header_end == std::string::npos) return out;  // no complete header yet
  std::string header = head->substr(0, header_end);
  if (!header.empty() && header.back() == '\r') header.pop_back();
  const std::vector<std::string> names = split_cells(header);
  for (const std::string& c : names) out["columns"].push_back(c);
  const bool append = id == v->id && from > header_end && from <= v->size;
  const size_t start = append ? from : header_end + 1;
  const std::string text = read_range(p, start, chunk_bytes).value_or("");
  json& rows = out["rows"];
  const size_t used = complete_lines(text, [&](const std::vector<std::string>& cells) {
    append_row(rows, cells, names.size());
  });
  size_t next = start + used;
  if (used == 0 && text.size() == chunk_bytes) {
    // A line longer than a chunk is no run's row: skip it whole (a chunk at
    // a time), as a malformed row is skipped, so the answers move on.
    for (next = start + chunk_bytes;;) {
      const std::string more = read_range(p, next, chunk_bytes).value_or("");
      const size_t nl = more.find('\n');
      next += nl == std::string::npos ? more.size() : nl + 1;
      if (nl != std::string::npos || more.size() < chunk_bytes) break;
    }
  }
  out["append"] = append;
  out["next"] = next;
  out["more"] = next < v->size && text.size() == chunk_bytes;
  return out;
}

}  // namespace

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
  const std::string id = req.get_param_value("id");
  if (what == "metrics" || what == "steps") {
    const std::string from_text = req.get_param_value("from");
    char* end = nullptr;
    const unsigned long long from = std::strtoull(from_text.c_str(), &end, 10);
    if (!from_text.empty() && (*end != '\0' || from_text[0] == '-'))
      return send_error(res, 400, "from: expected a byte offset (a whole number), got '" + from_text + "'");
    return send(res, 200, csv_increment(*dir / (what + ".csv"), id, static_cast<size_t>(from),
                                        options.chunk_bytes).dump());
  }
  // config.yaml, or confusion.json (written by the trainer with the test metrics).
  const fs::path file = *dir / (what == "config" ? "config.yaml" : "confusion.json");
  const std::optional<FileVersion> v = file_version(file);
  const std::string version = v ? v->changed : "";
  if (!id.empty() && id == version) return send(res, 200, json{{"id", version}, {"unchanged", true}}.dump());
  const auto text = v ? read_bounded(file) : std::nullopt;
  if (what == "config") return send(res, 200, json{{"id", version}, {"yaml", text.value_or("")}}.dump());
  json j = text ? json::parse(*text, nullptr, false) : json();
  if (j.is_discarded()) j = nullptr;  // being written, or not ours
  send(res, 200, json{{"id", j.is_null() ? "" : version}, {"confusion", j}}.dump());
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
