// serve::Board in-process on an ephemeral loopback port against a temporary
// root of fabricated runs: the JSON endpoints' values, a run added later, a
// row appended to metrics.csv / steps.csv, a partial last line, refused
// names that are not runs (.. included) and the page itself.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <unistd.h>

#include "ember/serve/board.h"

namespace ember::serve {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

void write(const fs::path& p, const std::string& text, std::ios::openmode mode = std::ios::trunc) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary | std::ios::out | mode) << text;
}

void make_run(const fs::path& dir, double lr) {
  write(dir / "config.yaml", fmt::format("model:\n  name: mlp\noptim:\n  lr: {}\ntrain:\n  epochs: 3\n", lr));
  write(dir / "metrics.csv", "epoch,train_loss,val_loss,val_acc,lr\n1,0.9,0.8,0.7,0.01\n");
  write(dir / "steps.csv", "step,epoch,batch,train_loss,train_acc,lr,images_per_s\n10,1,10,1.5,0.4,0.01,900\n");
}

class BoardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / fmt::format("ember_board_{}", ::getpid());
    fs::remove_all(root_);
    make_run(root_ / "a-20260101", 0.01);
    BoardOptions o;
    o.root = root_.string();
    o.port = 0;
    o.chunk_bytes = chunk_bytes_;
    board_ = std::make_unique<Board>(o);
    port_ = board_->bind();
    thread_ = std::thread([this] { board_->serve(); });
  }
  void TearDown() override {
    board_->stop();
    thread_.join();
    fs::remove_all(root_);
  }
  // GET path; the status and the body parsed as JSON (null when not JSON).
  std::pair<int, json> get(const std::string& path) {
    httplib::Client c("127.0.0.1", port_);
    auto r = c.Get(path);
    EXPECT_TRUE(r) << path;
    if (!r) return {0, json()};
    return {r->status, json::parse(r->body, nullptr, false)};
  }

  fs::path root_;
  size_t chunk_bytes_ = size_t{4} << 20;
  std::unique_ptr<Board> board_;
  int port_ = 0;
  std::thread thread_;
};

TEST_F(BoardTest, ListsRunsAndServesTheirCurves) {
  auto [status, runs] = get("/api/runs");
  ASSERT_EQ(status, 200);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["run"], "a-20260101");
  EXPECT_EQ(runs[0]["epoch"], 1);
  EXPECT_EQ(runs[0]["epochs"], 3);

  auto [s2, metrics] = get("/api/metrics?run=a-20260101");
  ASSERT_EQ(s2, 200);
  EXPECT_EQ(metrics["columns"], json({"epoch", "train_loss", "val_loss", "val_acc", "lr"}));
  ASSERT_EQ(metrics["rows"].size(), 1u);
  EXPECT_DOUBLE_EQ(metrics["rows"][0][3].get<double>(), 0.7);

  auto [s3, steps] = get("/api/steps?run=a-20260101");
  ASSERT_EQ(s3, 200);
  ASSERT_EQ(steps["rows"].size(), 1u);
  EXPECT_DOUBLE_EQ(steps["rows"][0][6].get<double>(), 900.0);

  auto [s4, config] = get("/api/config?run=a-20260101");
  ASSERT_EQ(s4, 200);
  EXPECT_NE(config["yaml"].get<std::string>().find("lr: 0.01"), std::string::npos);

  auto [s5, confusion] = get("/api/confusion?run=a-20260101");
  ASSERT_EQ(s5, 200);
  EXPECT_TRUE(confusion["confusion"].is_null());  // no test yet
}

TEST_F(BoardTest, SeesRunsAndRowsAddedWhileServing) {
  make_run(root_ / "b-20260102", 0.1);
  auto [status, runs] = get("/api/runs");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1]["run"], "b-20260102");
  // The hyper-parameters that differ: optim.lr only.
  EXPECT_EQ(runs[1]["config"], json({{"optim.lr", "0.1"}}));

  write(root_ / "b-20260102" / "metrics.csv", "2,0.5,0.4,0.85,0.01\n", std::ios::app);
  write(root_ / "b-20260102" / "steps.csv", "20,1,20,1.1,0.6,0.01,950\n30,2,", std::ios::app);
  auto [s2, metrics] = get("/api/metrics?run=b-20260102");
  ASSERT_EQ(metrics["rows"].size(), 2u);
  EXPECT_DOUBLE_EQ(metrics["rows"][1][3].get<double>(), 0.85);
  // The partial last line (a run writing it now) is left out.
  auto [s3, steps] = get("/api/steps?run=b-20260102");
  ASSERT_EQ(steps["rows"].size(), 2u);
  EXPECT_DOUBLE_EQ(steps["rows"][1][0].get<double>(), 20.0);

  write(root_ / "b-20260102" / "confusion.json", R"({"classes":["x","y"],"matrix":[[3,1],[0,4]]})");
  auto [s4, confusion] = get("/api/confusion?run=b-20260102");
  EXPECT_EQ(confusion["confusion"]["matrix"], json({{3, 1}, {0, 4}}));
  EXPECT_EQ(confusion["confusion"]["classes"], json({"x", "y"}));
}

// Note [board increments]: a client holding a file's id and `next` gets only
// the rows written since; a replaced file (a new id) comes whole again.
TEST_F(BoardTest, CsvAnswersCarryOnlyTheNewRows) {
  const fs::path steps = root_ / "a-20260101" / "steps.csv";
  auto [s1, first] = get("/api/steps?run=a-20260101");
  ASSERT_EQ(s1, 200);
  const std::string id = first["id"];
  EXPECT_FALSE(id.empty());
  EXPECT_EQ(first["append"], false);
  EXPECT_EQ(first["more"], false);
  EXPECT_EQ(first["next"].get<size_t>(), fs::file_size(steps));
  ASSERT_EQ(first["rows"].size(), 1u);

  // Nothing new: no rows, the same place.
  const std::string q = fmt::format("/api/steps?run=a-20260101&id={}&from=", id);
  auto [s2, none] = get(q + std::to_string(first["next"].get<size_t>()));
  EXPECT_EQ(none["append"], true);
  EXPECT_EQ(none["rows"], json::array());
  EXPECT_EQ(none["next"], first["next"]);

  // Two rows and a partial one appended: the two come, `next` stops before the third.
  write(steps, "20,1,20,1.25,0.5,0.01,910\n30,1,30,1.0,0.6,0.01,920\n40,2,", std::ios::app);
  auto [s3, more] = get(q + std::to_string(first["next"].get<size_t>()));
  EXPECT_EQ(more["append"], true);
  EXPECT_EQ(more["columns"], first["columns"]);
  ASSERT_EQ(more["rows"].size(), 2u);
  EXPECT_DOUBLE_EQ(more["rows"][0][3].get<double>(), 1.25);
  EXPECT_DOUBLE_EQ(more["rows"][1][0].get<double>(), 30.0);
  EXPECT_EQ(more["next"].get<size_t>(), fs::file_size(steps) - std::string("40,2,").size());
  write(steps, "1,1.0,0.7,0.01,930\n", std::ios::app);
  auto [s4, rest] = get(q + std::to_string(more["next"].get<size_t>()));
  ASSERT_EQ(rest["rows"].size(), 1u);
  EXPECT_DOUBLE_EQ(rest["rows"][0][0].get<double>(), 40.0);

  // A resume rewrites steps.csv with a rename: the old id gets the whole file.
  const fs::path tmp = root_ / "a-20260101" / "steps.csv.tmp";
  write(tmp, "step,epoch,batch,train_loss,train_acc,lr,images_per_s\n10,1,10,1.5,0.4,0.01,900\n");
  fs::rename(tmp, steps);
  auto [s5, again] = get(q + std::to_string(rest["next"].get<size_t>()));
  EXPECT_NE(again["id"], id);
  EXPECT_EQ(again["append"], false);
  ASSERT_EQ(again["rows"].size(), 1u);
  EXPECT_DOUBLE_EQ(again["rows"][0][0].get<double>(), 10.0);

  // A `from` that is not a byte offset is refused, naming it.
  for (const std::string bad : {"x", "-5", "12abc"}) {
    auto [s6, err] = get("/api/steps?run=a-20260101&from=" + bad);
    EXPECT_EQ(s6, 400) << bad;
    EXPECT_NE(err["error"].get<std::string>().find("'" + bad + "'"), std::string::npos) << err;
  }
}

TEST_F(BoardTest, JsonFilesAnswerUnchangedUntilRewritten) {
  const fs::path conf = root_ / "a-20260101" / "confusion.json";
  write(conf, R"({"classes":["x","y"],"matrix":[[3,1],[0,4]]})");
  auto [s1, first] = get("/api/confusion?run=a-20260101");
  const std::string id = first["id"];
  ASSERT_FALSE(id.empty());
  auto [s2, same] = get("/api/confusion?run=a-20260101&id=" + id);
  EXPECT_EQ(same["unchanged"], true);
  EXPECT_FALSE(same.contains("confusion"));
  const fs::path tmp = root_ / "a-20260101" / "confusion.json.tmp";
  write(tmp, R"({"classes":["x","y"],"matrix":[[4,0],[0,4]]})");
  fs::rename(tmp, conf);
  auto [s3, changed] = get("/api/confusion?run=a-20260101&id=" + id);
  EXPECT_FALSE(changed.contains("unchanged"));
  EXPECT_EQ(changed["confusion"]["matrix"], json({{4, 0}, {0, 4}}));
  auto [s4, config] = get("/api/config?run=a-20260101");
  auto [s5, config_again] = get("/api/config?run=a-20260101&id=" + config["id"].get<std::string>());
  EXPECT_EQ(config_again["unchanged"], true);
}

// The page's run table shows each run's test results (runs.h).
TEST_F(BoardTest, RunsCarryTheirTestResults) {
  write(root_ / "a-20260101" / "test_metrics.json", R"({"test_acc": 0.75, "test_f1[x]": 0.5})");
  auto [status, runs] = get("/api/runs");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["results"], json({{"test_acc", 0.75}}));
}

// A small chunk: a long file comes in pieces that add up to all its rows,
// and a line longer than a chunk is skipped whole.
class BoardChunkTest : public BoardTest {
 protected:
  BoardChunkTest() { chunk_bytes_ = 64; }
};

TEST_F(BoardChunkTest, ALongFileComesInPiecesWithNothingLost) {
  const fs::path steps = root_ / "a-20260101" / "steps.csv";
  std::string text = "step,epoch,batch,train_loss,train_acc,lr,images_per_s\n";
  for (int i = 1; i <= 40; ++i) {
    text += fmt::format("{},1,{},{},0.5,0.01,900\n", i, i, 1.0 / i);
    if (i == 20) text += std::string(200, '9') + "\n";  // no run's row
  }
  write(steps, text);
  std::vector<double> seen;
  std::string id;
  size_t next = 0;
  int answers = 0;
  for (bool more = true; more && answers < 1000; ++answers) {
    auto [status, a] = get(fmt::format("/api/steps?run=a-20260101&id={}&from={}", id, next));
    ASSERT_EQ(status, 200);
    for (const json& row : a["rows"]) seen.push_back(row[0].get<double>());
    id = a["id"];
    next = a["next"].get<size_t>();
    more = a["more"].get<bool>();
  }
  EXPECT_GT(answers, 20);
  EXPECT_EQ(next, fs::file_size(steps));
  ASSERT_EQ(seen.size(), 40u);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(seen[static_cast<size_t>(i)], i + 1.0);
}

TEST_F(BoardTest, RefusesNamesThatAreNotRuns) {
  write(root_ / "secret.csv", "step\n1\n");
  for (const std::string q : {"..", "../a-20260101", "a-20260101/..", "%2E%2E%2Fetc", "/etc", "", "nope"}) {
    auto [status, body] = get("/api/steps?run=" + q);
    EXPECT_EQ(status, 404) << q;
    EXPECT_TRUE(body.contains("error")) << q;
  }
  httplib::Client c("127.0.0.1", port_);
  auto r = c.Get("/../secret.csv");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
}

TEST_F(BoardTest, ServesThePage) {
  httplib::Client c("127.0.0.1", port_);
  auto r = c.Get("/");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(r->get_header_value("Content-Type").find("text/html"), std::string::npos);
  EXPECT_NE(r->body.find("/api/runs"), std::string::npos);
  // Self-contained: no script, style or image from the network.
  for (const char* ref : {"src=\"http", "href=\"http", "@import", "fetch(\"http"})
    EXPECT_EQ(r->body.find(ref), std::string::npos) << ref;
  EXPECT_EQ(r->body.find("innerHTML"), std::string::npos);  // untrusted text goes in as text
}

TEST(BoardCsv, KeepsCompleteRowsOnly) {
  const json j = json::parse(board_csv_json("a,b\n1,2\n3\n4,x\n5,6"));
  EXPECT_EQ(j["columns"], json({"a", "b"}));
  // "3" has too few cells, "x" is not a number (null), "5,6" has no newline yet.
  EXPECT_EQ(j["rows"], json({{1.0, 2.0}, {4.0, nullptr}}));
  EXPECT_EQ(json::parse(board_csv_json(""))["rows"], json::array());
}

TEST(BoardOptionsCheck, RootMustBeAFolder) {
  BoardOptions o;
  o.root = "/nonexistent/ember_board_root";
  EXPECT_THROW(Board b(o), std::exception);
}

}  // namespace
}  // namespace ember::serve
