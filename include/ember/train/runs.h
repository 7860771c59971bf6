// `ember runs [ROOT]`: the run directories under ROOT, each with its status,
// progress, best metric and duration (from status.json, run_status.h), and
// the config keys whose values differ between them (from config.yaml).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ember::train {

struct RunSummary {
  std::string dir;     // as found under the root
  std::string name;    // relative to the root
  std::string status;  // running, finished, interrupted, failed, unknown
  int64_t epoch = 0, epochs = 0;
  std::string monitor;
  double best = 0;     // NaN: none yet
  double seconds = 0;  // NaN: unknown
  std::string started;
  std::string error;
  std::map<std::string, std::string> config;  // flat key -> value text of config.yaml
  // test_metrics.json's whole-set values (test_acc, test_f1, test_loss, ...;
  // no per-class ones), once the run has been tested.
  std::map<std::string, double> results;
};

// Every run directory (a folder with config.yaml and status.json or
// metrics.csv) under `root`, searched three levels deep (a multirun's
// runs sit in its sweep folder), oldest first. A run written before
// status.json existed gets its epochs, best value and duration from
// metrics.csv and "finished" when test_metrics.json exists.
std::vector<RunSummary> list_runs(const std::string& root);

// The config keys whose value is not the same in every run (a key missing
// from some counts as differing), in sorted order.
std::vector<std::string> differing_keys(const std::vector<RunSummary>& runs);

// An aligned table: run, status, epochs (done/total), best, duration, then
// one column per differing key.
std::string runs_table(const std::vector<RunSummary>& runs);
// The same as a JSON array; "config" holds the differing keys only,
// "results" the test metrics.
std::string runs_json(const std::vector<RunSummary>& runs);

// "42.1s", "3m05s", "2h03m".
std::string run_duration_text(double seconds);

}  // namespace ember::train
