import Testing

/// Every suite that starts real `ubiq server` and `ubiq daemon` processes, one suite at a
/// time: each runs several debug-built processes, and all of them at once beside the other
/// targets' suites starved a 2-core CI machine (timing bounds elsewhere fired). The suites
/// nested here (in `extension DaemonSuites`) keep their own names.
@Suite("Programs and daemons", .serialized, .ownThreads)
struct DaemonSuites {}
