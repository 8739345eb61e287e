/// One at a time through a section of the engine's work that suspends (a scan, a pull of the
/// change feed): a second caller waits until the first leaves, and callers go through in the
/// order they came. A value the engine owns and changes on its own queue only:
///
///     if !turn.tryEnter() { await withCheckedContinuation { turn.queue($0) } }
///     defer { turn.leave() }
///
/// (A class whose `enter` awaited by itself ran off the engine's queue in a randomized run.)
struct Turnstile {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Callers waiting for their turn.
    var queued: Int { waiting.count }

    /// Takes the turn if nobody holds it; false: wait for it with `queue`.
    mutating func tryEnter() -> Bool {
        if busy { return false }
        busy = true
        return true
    }

    /// Waits for the turn: `leave` hands it over by resuming `c`.
    mutating func queue(_ c: CheckedContinuation<Void, Never>) { waiting.append(c) }

    /// Hands the turn to the next caller waiting, if any.
    mutating func leave() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }
}
