// The whole `ember` command line from the installed libember_cli.so
// (ember::cli), as a program with its own models would call it.
#include <ember/cli/main.h>

int main(int argc, char** argv) { return ember::cli::main(argc, argv); }
