// The `ember` command. Until the training workflow exists it offers
// `ember version` and `ember info`.
#include <cstdio>
#include <cstring>

#include "ember/ember.h"

int main(int argc, char** argv) {
  if (argc >= 2 && (std::strcmp(argv[1], "version") == 0 || std::strcmp(argv[1], "--version") == 0)) {
    std::printf("ember %s\n", ember::version());
    return 0;
  }
  if (argc >= 2 && std::strcmp(argv[1], "info") == 0) {
    std::printf("ember %s\nthreads: %d\n", ember::version(), ember::get_num_threads());
    return 0;
  }
  std::fprintf(stderr,
               "usage: ember <command>\n\ncommands:\n  version   print the version\n  info      print "
               "build and machine information\n");
  return argc >= 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) ? 0 : 2;
}
