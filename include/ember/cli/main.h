// The `ember` command line as a library call, so that a program with its own
// registered models (train::ModelRegistration) gets every command for them:
// train, --resume, eval, export, infer, serve, runs, ...
//
//   int main(int argc, char** argv) { return ember::cli::main(argc, argv); }
//
// Link ember::cli (the `ember` executable is exactly that line).
#pragma once

namespace ember::cli {

// Parses argv as the `ember` command does (argv[0] is the program) and runs
// the command. Returns the exit status: 0 success, 1 the run failed, 2 usage
// or configuration error (128 + signal when a run was interrupted).
int main(int argc, char** argv);

}  // namespace ember::cli
