// The `ember` executable: the command line of include/ember/cli/main.h.
#include "ember/cli/main.h"

int main(int argc, char** argv) { return ember::cli::main(argc, argv); }
