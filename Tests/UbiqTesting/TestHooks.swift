@_exported import UbiqHarness
import Testing

/// Called once when a test binary starts (a C constructor in `CTestHook`): the harness's log
/// rings are kept by test, so a bounded wait that gives up prints the lines of the devices and
/// servers its own test made.
@_cdecl("ubiq_testing_install_hooks")
public func installTestHooks() {
    TestRings.keyOfCurrentTest = { Test.current.map { "\($0.id)" } }
}
