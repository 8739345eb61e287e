import Testing
@testable import UbiqEngine

/// Scans and pulls take turns through a `Turnstile`: never two at once, in the order they came.
@Suite("Turnstile")
struct TurnstileTests {
    actor Section {
        var turn = Turnstile()
        var log: [String] = []
        var release: CheckedContinuation<Void, Never>?

        /// Enters, and for "A" holds the turn until `open` is called.
        func run(_ name: String) async {
            if !turn.tryEnter() { await withCheckedContinuation { turn.queue($0) } }
            log.append("\(name) in")
            if name == "A" { await withCheckedContinuation { release = $0 } }
            log.append("\(name) out")
            turn.leave()
        }
        func open() { release?.resume(); release = nil }
        var holding: Bool { release != nil }
        var queued: Int { turn.queued }
    }

    /// Bounded: yields until `condition` holds or 100,000 turns passed.
    func until(_ condition: () async -> Bool) async -> Bool {
        for _ in 0..<100_000 {
            if await condition() { return true }
            await Task.yield()
        }
        return false
    }

    @Test func callersGoThroughOneAtATimeInTheOrderTheyCame() async {
        let s = Section()
        let a = Task { await s.run("A") }
        #expect(await until { await s.holding })
        let b = Task { await s.run("B") }
        #expect(await until { await s.queued == 1 })
        let c = Task { await s.run("C") }
        #expect(await until { await s.queued == 2 })
        #expect(await s.log == ["A in"], "nobody else is in while A holds the turn")
        await s.open()
        await a.value; await b.value; await c.value
        #expect(await s.log == ["A in", "A out", "B in", "B out", "C in", "C out"])
        #expect(await s.queued == 0)
        // Free again: the next caller goes straight in.
        await s.run("D")
        #expect(await s.log.suffix(2) == ["D in", "D out"])
    }
}
