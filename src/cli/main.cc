// anchorage: the command line. Subcommands are added as the layers land.
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  std::fprintf(stderr, "usage: anchorage run [options]\n");
  return argc > 1 && std::strcmp(argv[1], "--help") == 0 ? 0 : 2;
}
