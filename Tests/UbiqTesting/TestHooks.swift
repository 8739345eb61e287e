@_exported import UbiqHarness
import Foundation
import Testing

/// Called once when a test binary starts (a C constructor in `CTestHook`): the harness's log
/// rings are kept by test, so a bounded wait that gives up prints the lines of the devices and
/// servers its own test made; and the run's width is capped (``TestRunWidth``).
@_cdecl("ubiq_testing_install_hooks")
public func installTestHooks() {
    TestRings.keyOfCurrentTest = { Test.current.map { "\($0.id)" } }
    TestRunWidth.install()
}

/// How many test cases run at once. Swift Testing starts every test case of the run at the
/// same time unless told otherwise; ours are whole servers, devices and daemons with bounded
/// waits, and ~150 of them at once on a 2-core machine starved each other for minutes (requests
/// of 1–3 s, 12-byte files hashed in 2 s, push channels that never said hello: every clean-clone
/// CI run of session 43 was red). Four cases per core keep both cores busy — the run takes as
/// long (340 s) — and each case's waits mean what they say. Set before Swift Testing reads its
/// configuration (the constructor runs before `main`); a width in the environment is kept.
public enum TestRunWidth {
    public static let variable = "SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH"

    /// The width for a machine of `cores` cores.
    public static func width(cores: Int) -> Int { max(4, 4 * cores) }

    /// The width the environment gave before the hook ran (kept), if any.
    nonisolated(unsafe) public private(set) static var given: String?

    static func install() {
        given = getenv(variable).map { String(cString: $0) }
        setenv(variable, String(width(cores: ProcessInfo.processInfo.activeProcessorCount)), 0)
    }
}
