// Runs when a test binary starts (before any test): lets the test helpers install what the
// harness asks of a test run (see `installTestHooks` in UbiqTesting). Only test targets link it.
#include "CTestHook.h"

extern void ubiq_testing_install_hooks(void);

__attribute__((constructor)) static void ubiq_testing_constructor(void) { ubiq_testing_install_hooks(); }
