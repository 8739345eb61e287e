/// One at a time through a section of the engine's work that suspends (a scan, a pull of the
/// change feed): a second caller waits until the first leaves, and callers go through in the
/// order they came. Used on the engine's queue only (its methods run where their caller runs).
final class Turnstile {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Callers waiting for their turn.
    var queued: Int { waiting.count }

    /// Waits for the turn; every `enter` is paired with one `leave`.
    nonisolated(nonsending) func enter() async {
        guard busy else { busy = true; return }
        await withCheckedContinuation { waiting.append($0) }  // handed the turn by `leave`
    }

    /// Hands the turn to the next caller waiting, if any.
    func leave() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }
}
