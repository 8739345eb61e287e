import Foundation
import Testing
import UbiqTesting

/// The test binary caps how many test cases run at once before Swift Testing reads its
/// configuration (`CTestHook` → `TestRunWidth`): without it every case of the run starts at
/// once and the suite's servers and devices starve each other on a small machine.
struct TestRunWidthTests {
    @Test func theRunIsCappedBeforeItStarts() throws {
        let set = try #require(getenv(TestRunWidth.variable).map { String(cString: $0) }, "the constructor did not run")
        let width = try #require(Int(set))
        #expect(width >= 1)
        if let given = TestRunWidth.given {
            #expect(set == given, "a width in the environment is kept")
        } else {
            #expect(width == TestRunWidth.width(cores: ProcessInfo.processInfo.activeProcessorCount))
        }
        #expect(TestRunWidth.width(cores: 1) == 4 && TestRunWidth.width(cores: 2) == 8 && TestRunWidth.width(cores: 16) == 64)
    }
}
