#include "orchestrator/cli.h"

int main(int argc, char** argv) { return icewarden::RunCli(argc, argv); }
