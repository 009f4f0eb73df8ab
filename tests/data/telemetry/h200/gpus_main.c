/* Fallback entry point for building only `servetop gpus` on the GPU machine. */
#include "cli/cli.h"
int main(int argc, char **argv) { return cmd_gpus_main(argc - 1, argv + 1); }
