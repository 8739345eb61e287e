// The constructor of test binaries (hook.c); nothing to call from Swift.
#pragma once
