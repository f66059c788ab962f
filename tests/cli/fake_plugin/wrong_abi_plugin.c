/* A shared library with the CUDA plugin's entry points but another ABI number and version:
   the loader must refuse it by name (tests/cli/CMakeLists.txt, cli_cuda_plugin_refusals). */
int meshwork_cuda_plugin_abi(void) { return 999; }
const char* meshwork_cuda_plugin_version(void) { return "0.0.0-other"; }
const void* meshwork_cuda_plugin_instance(void) { return 0; }
