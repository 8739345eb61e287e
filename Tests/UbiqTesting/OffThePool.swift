import Foundation

/// Runs blocking work (socket waits, sleeps in a child's pace) on a thread of its own, so it
/// never holds one of the few threads of Swift's cooperative pool: an in-process server needs
/// them to answer, and a test blocking one while it waits for that answer starves itself.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { c in Thread { c.resume(with: Result { try body() }) }.start() }
}
