#include "orchestrator/cli/cli.h"

int main(int argc, char** argv) { return icewarden::RunCli(argc, argv); }
