import Testing

/// Suites that run the real `ubiq` binary (and tmux) wait for child processes synchronously,
/// holding a thread of the small cooperative pool while they wait. They run one at a time so
/// they never hold every thread at once (which stalls the in-process servers and engines of
/// the other suites).
@Suite("Real binary and terminal", .serialized, .ownThreads)
enum ProcessBoundTests {}
