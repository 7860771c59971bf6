// The `ember` command line, ember::cli::main (include/ember/cli/main.h): the
// `ember` executable (ember.cpp) and programs with their own registered models
// (examples/custom_model.cpp) call it. Commands: train, eval, version, info, ...
//   ember train CONFIG.yaml [key=value ...] [group=choice ...]
//   ember train -m CONFIG.yaml model=cnn,mlp optim.lr=1e-3,3e-4   (multirun: the grid)
//   ember train --resume RUN_DIR [key=value ...] [--reset optimizer|schedule]
//   ember eval RUN_DIR|CHECKPOINT [--split test]
//   ember eval CONFIG.yaml model.init_from=WEIGHTS [key=value ...] [--split test]
//   ember runs [ROOT] [--json]
//   ember info [RUN_DIR]   (this build, or what the run ran on: its env.json)
//   ember board [ROOT] [--host 127.0.0.1] [--port 6006]
//   mpirun -np N ember train CONFIG.yaml dist.enabled=true   (data parallel)
// Exit codes: 0 success, 1 the run failed, 2 usage or configuration error
// (train::ConfigError: a bad config file, key, value or range, or a data
// file the config names that cannot be used; found before training starts).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "ember/cli/main.h"
#include "ember/distributed/mpi.h"
#include "ember/ember.h"
#include "ember/train/config.h"
#include "ember/train/multirun.h"
#include "ember/train/runs.h"
#include "ember/train/trainer.h"
#include "ember/train/zoo.h"
#include "board_command.h"
#include "convert_command.h"
#include "info_command.h"
#include "jit_commands.h"
#include "runtime_commands.h"
#include "serve_command.h"

using namespace ember;

namespace {

constexpr int kOk = 0, kRunFailed = 1, kUsage = 2;

// Every option with its default and help: the base schema plus each zoo
// model's options.
std::string options_help() {
  std::string out = "\nConfig options (set in CONFIG.yaml or as key=value):\n";
  train::Schema base = train::experiment_schema(train::model_names().front());
  auto print = [&](const train::OptionSpec& o) {
    std::string def = train::value_to_text(o.default_value);
    if (o.type == train::ValueType::String) def = "\"" + def + "\"";
    out += fmt::format("  {:<34} {:<12} {}", o.key, def, o.help);
    if (!o.choices.empty()) out += fmt::format(" [{}]", fmt::join(o.choices, ", "));
    if (!o.range.empty()) out += fmt::format(" (in {})", o.range);
    out += "\n";
  };
  for (const train::OptionSpec& o : base.options())
    if (o.key.rfind("model.", 0) != 0 || o.key == "model.name") print(o);
  for (const std::string& name : train::model_names()) {
    const train::ModelEntry& m = train::find_model(name);
    out += fmt::format("\nmodel.name = {}: {}\n", name, m.help);
    for (const train::OptionSpec& o : m.options.options()) print(o);
  }
  return out;
}

// How the program was invoked: argv[0] as typed names it in the resume
// command a run prints; its file name names it in help and errors, as
// argparse's prog does. A program of the user's own (examples/
// custom_model.cpp) is then not called `ember`.
struct Program {
  std::string typed = "ember", name = "ember";
  explicit Program(int argc, char** argv) {
    if (argc < 1 || argv[0] == nullptr || *argv[0] == '\0') return;
    typed = argv[0];
    const std::string file = std::filesystem::path(typed).filename().string();
    if (!file.empty()) name = file;
  }
  std::string version_text() const {
    return name == "ember" ? fmt::format("ember {}", version()) : fmt::format("{} (ember {})", name, version());
  }
};

int run_train(const std::vector<std::string>& args, const std::string& resume, const std::vector<std::string>& resets,
              bool sweep, int64_t stop_after, const Program& program, const std::string& command_line,
              const distributed::ProcessGroupPtr& group) {
  std::string config_path;
  std::vector<std::string> overrides;
  for (const std::string& a : args) {
    if (a.find('=') != std::string::npos || a.starts_with('~')) overrides.push_back(a);  // ~key: Hydra's delete
    else if (config_path.empty() && resume.empty()) config_path = a;
    else throw train::ConfigError(fmt::format("unexpected argument '{}': expected key=value overrides after {}", a,
                                              resume.empty() ? "CONFIG.yaml" : "--resume RUN_DIR"));
  }
  if (resume.empty() && config_path.empty())
    throw train::ConfigError(fmt::format(
        "{} train needs CONFIG.yaml (e.g. configs/fashion_mnist_cnn.yaml) or --resume RUN_DIR", program.name));
  if (resume.empty() && !resets.empty())
    throw train::ConfigError("--reset applies to --resume RUN_DIR only");
  if (sweep && !resume.empty())
    throw train::ConfigError("--multirun starts new runs; resume each run of a sweep with --resume RUN_DIR");
  if (sweep && stop_after > 0)
    throw train::ConfigError("--stop-after-epochs applies to one run; stop a sweep's runs one by one with --resume");
  if (sweep && group && group->size() > 1)
    throw train::ConfigError("--multirun runs its jobs one after another in one process; launch it without mpirun");
  train::TrainOptions options;
  options.command_line = command_line;
  options.program = program.typed;
  options.stop_after_epochs = stop_after;
  options.resets = train::parse_resets(resets);
  options.handle_interrupts = true;
  options.group = group;
  if (sweep) {
    train::MultirunResult m = train::multirun(config_path, overrides, options);
    std::cout << "\n" << train::multirun_table(m) << std::flush;
    if (m.interrupt_signal) return 128 + m.interrupt_signal;
    return m.all_finished() ? kOk : kRunFailed;
  }
  train::Trainer trainer = resume.empty() ? train::Trainer(train::load_config(config_path, overrides), options)
                                          : train::Trainer::resume(resume, options, overrides);
  train::TrainResult r = trainer.fit();
  if (r.interrupt_signal) return 128 + r.interrupt_signal;  // 130 for Ctrl-C, as a shell reports it
  // A run stopped by --stop-after-epochs did what was asked.
  return r.finished || (stop_after > 0 && r.epochs_completed > 0) ? kOk : kRunFailed;
}

// In a data-parallel job a failing rank ends the whole job (MPI_Abort):
// the others would otherwise wait for it in their next collective. The
// launcher then reports which rank aborted.
int fail(const Program& program, const distributed::ProcessGroupPtr& group, const char* what, const char* message,
         int code) {
  const char* name = program.name.c_str();
  if (group && group->size() > 1) {
    std::fprintf(stderr, "%s: rank %d of %d: %s: %s\n", name, group->rank(), group->size(), what, message);
    std::fflush(stderr);
    group->abort(code);
  }
  std::fprintf(stderr, "%s: %s: %s\n", name, what, message);
  return code;
}

}  // namespace

int ember::cli::main(int argc, char** argv) {
  cli::use_passive_openmp_for_serve(argc, argv);
  const Program program(argc, argv);
  CLI::App app{"Ember: train, evaluate and ship deep-learning models in C++"};
  app.name(program.name);
  app.require_subcommand(1);
  app.set_version_flag("--version", program.version_text());

  CLI::App* train_cmd = app.add_subcommand("train", "train a model from a YAML config, or resume a run");
  std::vector<std::string> train_args;
  std::string resume_dir;
  train_cmd->add_option("args", train_args,
                        "CONFIG.yaml followed by key=value overrides (e.g. optim.lr=3e-4) and config group choices "
                        "(model=resnet reads configs/model/resnet.yaml)");
  train_cmd->add_option("--resume", resume_dir, "continue the run in RUN_DIR from its last.ckpt")->type_name("RUN_DIR");
  std::vector<std::string> resets;
  train_cmd->add_option("--reset", resets,
                        "with --resume: start afresh instead of restoring: optimizer (a new optimizer and LR schedule, "
                        "needed to change optim.*) or schedule (needed to change schedule.*); one value per "
                        "--reset, repeat it for both")
      ->type_name("optimizer|schedule")
      // One value each: key=value overrides after it are overrides, not more resets.
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  bool multirun = false;
  train_cmd->add_flag("-m,--multirun", multirun,
                      "run the grid of every combination of the comma-separated values (optim.lr=1e-3,3e-4 "
                      "model=cnn,mlp), one run directory each, and print a table; write lists in brackets");
  int64_t stop_after = 0;
  train_cmd->add_option("--stop-after-epochs", stop_after,
                        "train this many epochs in this process, save last.ckpt and stop (exit 0); --resume RUN_DIR "
                        "continues exactly where it stopped (the schedule still plans for train.epochs)")
      ->type_name("N")
      ->check(CLI::PositiveNumber);
  train_cmd->footer([] { return options_help(); });

  CLI::App* eval_cmd = app.add_subcommand(
      "eval", "evaluate a run's best.ckpt, a checkpoint file, or a config with model.init_from=WEIGHTS");
  std::string eval_target, split = "test";
  std::vector<std::string> eval_overrides;
  eval_cmd->add_option("target", eval_target, "RUN_DIR, CHECKPOINT or CONFIG.yaml")->required();
  eval_cmd->add_option("overrides", eval_overrides,
                       "key=value overrides after CONFIG.yaml (e.g. model.init_from=weights.pt)");
  eval_cmd->add_option("--split", split, "data split: test, val or train")->capture_default_str()
      ->check(CLI::IsMember({"test", "val", "train"}));

  CLI::App* version_cmd = app.add_subcommand("version", "print the version");
  cli::InfoCommand info_cmd(app);  // info [RUN_DIR]
  cli::JitCommands jit_cmds(app);  // export, inspect
  cli::ConvertCommand convert_cmd(app);
  cli::RuntimeCommands runtime_cmds(app);  // infer, bench
  cli::ServeCommand serve_cmd(app);
  // `ember runs [ROOT] [--json]` (the table itself: train/runs.h).
  CLI::App* runs_cmd = app.add_subcommand(
      "runs", "list the runs under ROOT: status, epochs, best metric, duration and the config keys that differ "
              "between them");
  std::string runs_root = "runs";
  bool runs_json = false;
  runs_cmd->add_option("root", runs_root, "folder of run directories (the trainer's log.root)")->capture_default_str();
  runs_cmd->add_flag("--json", runs_json, "print a JSON array instead of a table");
  cli::BoardCommand board_cmd(app);

  distributed::ProcessGroupPtr group;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kUsage;
  }

  try {
    if (*version_cmd) {
      std::printf("%s\n", program.version_text().c_str());
      return kOk;
    }
    if (auto rc = info_cmd.run()) return *rc;
    if (auto rc = jit_cmds.run()) return *rc;
    if (auto rc = convert_cmd.run()) return *rc;
    if (auto rc = runtime_cmds.run()) return *rc;
    if (auto rc = serve_cmd.run()) return *rc;
    if (*runs_cmd) {
      if (!std::filesystem::is_directory(runs_root))
        throw train::ConfigError(
            fmt::format("runs: '{}' is not a folder (runs go to log.root, by default runs/)", runs_root));
      std::vector<train::RunSummary> runs = train::list_runs(runs_root);
      if (runs_json) std::cout << train::runs_json(runs);
      else if (runs.empty()) std::cout << fmt::format("no runs under {}\n", runs_root);
      else std::cout << train::runs_table(runs);
      return kOk;
    }
    if (auto rc = board_cmd.run()) return *rc;
    if (*train_cmd) {
      std::string command_line = program.typed;
      for (int i = 1; i < argc; ++i) command_line += std::string(" ") + argv[i];
      // Under an MPI launcher every rank joins the job (without one: a world
      // of one, and MPI is never started).
      if (distributed::launched_by_mpi()) group = distributed::init_process_group("mpi");
      return run_train(train_args, resume_dir, resets, multirun, stop_after, program, command_line, group);
    }
    if (*eval_cmd) {
      const std::string ext = std::filesystem::path(eval_target).extension().string();
      if (ext == ".yaml" || ext == ".yml") {
        train::evaluate_config(eval_target, eval_overrides, split, std::cout);
      } else {
        if (!eval_overrides.empty())
          throw train::ConfigError(fmt::format("eval: key=value overrides apply to CONFIG.yaml only, not to '{}'",
                                               eval_target));
        train::evaluate(eval_target, split, std::cout);
      }
      return kOk;
    }
  } catch (const train::ConfigError& e) {
    return fail(program, group, "error", e.what(), kUsage);
  } catch (const std::exception& e) {
    return fail(program, group, "run failed", e.what(), kRunFailed);
  }
  return kUsage;
}
