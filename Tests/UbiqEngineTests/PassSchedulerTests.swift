import Foundation
import Testing
import UbiqCore
@testable import UbiqEngine
import UbiqTesting

/// When passes run (`PassScheduler`), driven event by event with made-up times like the front
/// end's controller: the rules one by one, then seeded random event sequences against the
/// promises the engine relies on (one pass loop, one timer, no local change ever skipped).
@Suite("Pass scheduler")
struct PassSchedulerTests {
    static let settle: Duration = .seconds(2)
    let t0 = ContinuousClock.now
    static func p(_ s: String) -> RelativePath { try! RelativePath(validating: s) }

    /// Runs one whole pass the way the engine's loop does; returns whether it looked at anything.
    static func runPass(_ s: inout PassScheduler, now: ContinuousClock.Instant, quiet: Bool = true) -> Bool {
        guard s.takePass() else { return false }
        guard s.passHasWork() else { return false }
        _ = s.handle(.roundPlanned, now: now)
        if quiet { _ = s.handle(.roundQuiet(stable: true), now: now) }
        return true
    }

    @Test func aRequestStartsOneLoopAndLaterRequestsJoinIt() {
        var s = PassScheduler(settleTime: Self.settle)
        let r1 = s.handle(.request(after: nil, remoteOnly: false), now: t0) == [.startPassLoop]
        #expect(r1)
        let r2 = s.handle(.request(after: nil, remoteOnly: false), now: t0).isEmpty
        #expect(r2)
        #expect(!s.isQuiet)
        let r3 = s.takePass()
        #expect(r3)
        let r4 = s.handle(.announced, now: t0).isEmpty
        #expect(r4, "the running loop takes it")
        let r5 = s.takePass()
        #expect(r5, "asked for while the pass ran: one more pass")
        let r6 = !s.takePass()
        #expect(r6)
        #expect(s.isQuiet)
        #expect(s.passesStarted == 2)
    }

    /// `P` / `ubiq pause`: no pass starts while paused and a running one is cancelled; what was
    /// asked for meanwhile (a file written, the server's news) runs on resume, with a scan.
    @Test func pausedNothingStartsAndResumeRunsWhatWasAskedFor() {
        var s = PassScheduler(settleTime: Self.settle)
        let start = s.handle(.request(after: nil, remoteOnly: false), now: t0)
        #expect(start == [.startPassLoop] && s.takePass())
        let pause = s.handle(.pause(true), now: t0)
        #expect(pause == [.cancelPass], "the running pass is cancelled")
        let again = s.handle(.pause(true), now: t0)
        #expect(again.isEmpty, "pausing twice changes nothing")
        let asked = s.handle(.announced, now: t0) + s.handle(.files([WatchEvent(path: Self.p("Documents/a.txt"), kind: .closedWrite)]), now: t0)
        #expect(asked.isEmpty, "nothing starts while paused")
        let fired = s.handle(.request(after: .milliseconds(5), remoteOnly: false), now: t0)
        let timer = fired.isEmpty ? [] : s.handle(.timerFired(due: t0 + .milliseconds(5)), now: t0 + .milliseconds(5))
        #expect(timer.isEmpty, "a timer going off while paused starts nothing")
        let ended = !s.takePass()
        #expect(ended && s.isQuiet, "the loop ends; a command waiting for quiet is not held for the user")
        let resumed = s.handle(.pause(false), now: t0)
        #expect(resumed == [.startPassLoop] && !s.isQuiet)
        #expect(Self.runPass(&s, now: t0), "the resumed pass looks at the folder")
        let pausedIdle = s.handle(.pause(true), now: t0)
        #expect(pausedIdle.isEmpty || pausedIdle == [.cancelPass])
    }

    @Test func aBurstOfWritesAsksOnceAndTheFileSettles() {
        var s = PassScheduler(settleTime: Self.settle)
        let f = Self.p("Documents/big.bin")
        let r7 = s.handle(.files([WatchEvent(path: f, kind: .changed)]), now: t0) == [.arm(due: t0 + PassScheduler.firstWriteDelay)]
        #expect(r7)
        for i in 1...50 {
            let r8 = s.handle(.files([WatchEvent(path: f, kind: .changed)]), now: t0 + .milliseconds(i * 10)).isEmpty
            #expect(r8, "write \(i) asked again")
        }
        #expect(s.isBeingWritten(f, now: t0 + .milliseconds(600)))
        #expect(!s.isBeingWritten(f, now: t0 + .milliseconds(500) + Self.settle + .milliseconds(1)))
        // The timer fires; the loop runs its pass and ends.
        let fired = s.handle(.timerFired(due: t0 + PassScheduler.firstWriteDelay), now: t0 + .milliseconds(600))
        #expect(fired == [.startPassLoop])
        let ran = Self.runPass(&s, now: t0 + .milliseconds(600)), more = s.takePass()
        #expect(ran && !more)
        // A write after the settle time is a new burst.
        let r9 = s.handle(.files([WatchEvent(path: f, kind: .changed)]), now: t0 + .seconds(10)) == [.arm(due: t0 + .seconds(10) + PassScheduler.firstWriteDelay)]
        #expect(r9)
        // Closing the file ends the wait and asks now.
        let r10 = s.handle(.files([WatchEvent(path: f, kind: .closedWrite)]), now: t0 + .seconds(11)) == [.startPassLoop]
        #expect(r10)
        #expect(!s.isBeingWritten(f, now: t0 + .seconds(11)))
    }

    @Test func aRenameEndsAWriteAndAnOverflowForgetsManifests() {
        var s = PassScheduler(settleTime: Self.settle)
        let f = Self.p("Documents/save.txt")
        _ = s.handle(.files([WatchEvent(path: f, kind: .changed)]), now: t0)
        let r11 = s.handle(.files([WatchEvent(path: f, kind: .placed)]), now: t0 + .milliseconds(5)) == [.startPassLoop]
        #expect(r11)
        #expect(!s.isBeingWritten(f, now: t0 + .milliseconds(5)))
        var o = PassScheduler(settleTime: Self.settle)
        let r12 = o.handle(.files([WatchEvent(path: nil, kind: .overflow)]), now: t0) == [.forgetManifests, .startPassLoop]
        #expect(r12)
    }

    @Test func anEarlierTimerReplacesALaterOneAndTheLaterFiresForNothing() {
        var s = PassScheduler(settleTime: Self.settle)
        let late = t0 + .seconds(5), early = t0 + .seconds(1)
        let r13 = s.handle(.request(after: .seconds(5), remoteOnly: true), now: t0) == [.arm(due: late)]
        #expect(r13)
        let r14 = s.handle(.request(after: .seconds(9), remoteOnly: false), now: t0).isEmpty
        #expect(r14, "joins the armed timer")
        let r15 = s.handle(.request(after: .seconds(1), remoteOnly: true), now: t0) == [.arm(due: early)]
        #expect(r15)
        let r16 = s.handle(.timerFired(due: early), now: early) == [.startPassLoop]
        #expect(r16)
        #expect(s.localDirty, "the joined local request is kept by the timer that replaced it")
        let r17 = s.handle(.timerFired(due: late), now: late).isEmpty
        #expect(r17)
    }

    @Test func aPassForNothingNewStopsAfterItsPull() {
        var s = PassScheduler(settleTime: Self.settle)
        _ = s.handle(.request(after: nil, remoteOnly: false), now: t0)
        let r18 = Self.runPass(&s, now: t0)
        #expect(r18)
        let r19 = !s.takePass()
        #expect(r19)
        // The server says hello but had nothing new: nothing to look at.
        let r20 = s.handle(.hello, now: t0) == [.startPassLoop]
        #expect(r20)
        let r21 = s.takePass() && !s.passHasWork()
        #expect(r21)
        let r22 = !s.takePass()
        #expect(r22)
        // A pull by a command brought changes: the next remote-only pass plans them.
        _ = s.handle(.remoteChanged, now: t0)
        _ = s.handle(.announced, now: t0)
        let r23 = s.takePass() && s.passHasWork()
        #expect(r23)
        _ = s.handle(.roundPlanned, now: t0)
        _ = s.handle(.roundQuiet(stable: false), now: t0)
        let r24 = !s.takePass()
        #expect(r24)
        // A pass that left a file unsettled is not quiet: the next pass looks again.
        _ = s.handle(.hello, now: t0)
        let r25 = s.takePass() && s.passHasWork()
        #expect(r25)
    }

    @Test func newsPendingUntilAPullCoversIt() {
        var s = PassScheduler(settleTime: Self.settle)
        #expect(!s.newsPending)
        _ = s.handle(.announced, now: t0)
        _ = s.handle(.pullFirst, now: t0)
        #expect(s.newsPending)
        _ = s.handle(.pulled(upTo: 1), now: t0)
        #expect(s.newsPending, "the second note came after what the pull covered")
        _ = s.handle(.pulled(upTo: s.announced), now: t0)
        #expect(!s.newsPending)
    }

    @Test func retriesBackOffAndHelloResetsThem() {
        var s = PassScheduler(settleTime: Self.settle)
        var waits: [Duration] = []
        var now = t0
        for _ in 0..<10 {
            let actions = s.handle(.pullFailed, now: now)
            guard case .arm(let due)? = actions.first else { Issue.record("no retry armed: \(actions)"); return }
            waits.append(due - now)
            _ = s.handle(.timerFired(due: due), now: due)
            now = due
        }
        #expect(waits.prefix(4) == [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2)])
        #expect(waits.last == PassScheduler.longestRetry)
        var pushWaits: [Duration] = []
        for _ in 0..<6 { for case .reconnectPush(let d) in s.handle(.pushClosed, now: now) { pushWaits.append(d) } }
        #expect(pushWaits == [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(4)])
        _ = s.handle(.hello, now: now)
        #expect(s.retryDelay == PassScheduler.firstRetry && s.pushRetryDelay == PassScheduler.firstRetry)
    }

    /// A flaky network (seen with lost requests): passes that each lost one request doubled the
    /// delay to 15 s even though every pass got steps done; a round that gets anything done
    /// brings it back to 250 ms, and only passes that get nothing done double it.
    @Test func aRoundThatReachesTheServerEndsTheBackoff() {
        var s = PassScheduler(settleTime: Self.settle)
        var now = t0
        for _ in 0..<6 {
            for case .arm(let due) in s.handle(.roundRan(online: false, progressed: false), now: now) { now = due; _ = s.handle(.timerFired(due: due), now: now) }
        }
        #expect(s.retryDelay == .seconds(15))
        _ = s.handle(.roundRan(online: true, progressed: true), now: now)
        #expect(s.retryDelay == PassScheduler.firstRetry)
        for _ in 0..<3 { _ = s.handle(.roundRan(online: false, progressed: false), now: now) }
        #expect(s.retryDelay == .seconds(2))
        let again = s.handle(.roundRan(online: false, progressed: true), now: now)
        #expect(again.contains(.arm(due: now + PassScheduler.firstRetry)) || s.loopRunning)
        _ = s.handle(.pullFailed, now: now)
        _ = s.handle(.roundQuiet(stable: true), now: now)
        #expect(s.retryDelay == PassScheduler.firstRetry)
    }

    @Test func nothingStartsAfterStop() {
        var s = PassScheduler(settleTime: Self.settle)
        _ = s.handle(.request(after: .seconds(1), remoteOnly: false), now: t0)
        _ = s.handle(.request(after: nil, remoteOnly: false), now: t0)
        _ = s.handle(.stop, now: t0)
        let r26 = !s.takePass()
        #expect(r26)
        let r27 = s.handle(.timerFired(due: t0 + .seconds(1)), now: t0 + .seconds(1)).isEmpty
        #expect(r27)
        let r28 = s.handle(.request(after: nil, remoteOnly: false), now: t0).isEmpty
        #expect(r28)
        let r29 = s.handle(.files([WatchEvent(path: Self.p("Documents/a"), kind: .closedWrite)]), now: t0).isEmpty
        #expect(r29)
        #expect(s.isQuiet)
    }

    /// Random events in random order, with the pass loop interleaved the way the engine runs
    /// it: one loop at most, one live timer at most and never later than a request asked for,
    /// delays within their bounds, and a change in the folder is never skipped by a pass.
    @Test func randomEventSequencesKeepTheSchedulersPromises() {
        var rng = SeededRandom.forTest("pass.scheduler")
        for run in 0..<200 {
            var s = PassScheduler(settleTime: Self.settle)
            var now = t0
            var loop = false
            var live: ContinuousClock.Instant?  // the timer whose firing counts
            var armed: [ContinuousClock.Instant] = []
            var localWanted = false  // a local change asked for since the last planned round
            var inPass = false
            var log: [String] = []
            func check(_ ok: Bool, _ what: String) {
                if !ok { Issue.record("run \(run): \(what)\n\(log.suffix(12).joined(separator: "\n"))") }
            }
            func apply(_ actions: [PassScheduler.Action], for requested: Duration?) {
                for a in actions {
                    switch a {
                    case .startPassLoop:
                        check(!loop, "a second pass loop")
                        loop = true
                    case .arm(let due):
                        check(live.map { due < $0 } ?? true, "a timer armed no earlier than the live one")
                        live = due
                        armed.append(due)
                    case .forgetManifests, .reconnectPush, .cancelPass: break
                    }
                }
                if let d = requested, !s.stopped {
                    check((live.map { $0 <= now + d } ?? false) || loop, "a delayed request with no timer due in time")
                }
            }
            let stopAt = Int.random(in: 0..<10, using: &rng) == 0 ? Int.random(in: 0..<150, using: &rng) : -1
            for step in 0..<150 {
                now = now + .milliseconds(Int.random(in: 0...400, using: &rng))
                if step == stopAt { _ = s.handle(.stop, now: now); log.append("stop") }
                let pick = Int.random(in: 0..<14, using: &rng)
                switch pick {
                case 0, 1:
                    let remoteOnly = Bool.random(using: &rng)
                    let delay: Duration? = Bool.random(using: &rng) ? .milliseconds(Int.random(in: 1...20_000, using: &rng)) : nil
                    log.append("request \(delay.map { "\($0)" } ?? "now") \(remoteOnly ? "remote" : "local")")
                    if !remoteOnly && delay == nil && !s.stopped { localWanted = true }
                    apply(s.handle(.request(after: delay, remoteOnly: remoteOnly), now: now), for: delay)
                case 2:
                    guard !armed.isEmpty else { continue }
                    let due = armed.remove(at: Int.random(in: 0..<armed.count, using: &rng))
                    if due > now { now = due }
                    let wasLive = due == live
                    if wasLive { live = nil }
                    let local = s.delayed?.local ?? false
                    log.append("timer \(wasLive ? "live" : "stale")")
                    let actions = s.handle(.timerFired(due: due), now: now)
                    if !wasLive { check(actions.isEmpty, "a stale timer acted: \(actions)") }
                    if wasLive && local && !s.stopped { localWanted = true }
                    apply(actions, for: nil)
                case 3:
                    let kind: WatchEvent.Kind = [.changed, .changed, .placed, .closedWrite, .overflow].randomElement(using: &rng)!
                    log.append("file \(kind)")
                    let f = Self.p("Documents/f\(Int.random(in: 0..<3, using: &rng))")
                    // The first write of a burst asks for a pass soon; later ones are for the
                    // pass that finds the file unsettled to look at again.
                    let burstGoesOn = s.isBeingWritten(f, now: now)
                    let actions = s.handle(.files([WatchEvent(path: f, kind: kind)]), now: now)
                    if kind != .changed && !s.stopped { localWanted = true }
                    apply(actions, for: kind == .changed && !burstGoesOn ? PassScheduler.firstWriteDelay : nil)
                case 4: log.append("hello"); apply(s.handle(.hello, now: now), for: nil)
                case 5: log.append("announced"); apply(s.handle(.announced, now: now), for: nil)
                case 6: log.append("pull first"); apply(s.handle(.pullFirst, now: now), for: nil)
                case 7:
                    log.append("pull failed")
                    let wait = s.retryDelay
                    apply(s.handle(.pullFailed, now: now), for: wait)
                case 8:
                    log.append("push closed")
                    for case .reconnectPush(let d) in s.handle(.pushClosed, now: now) {
                        check(d >= PassScheduler.firstRetry && d <= PassScheduler.longestPushRetry, "push retry \(d)")
                    }
                default:
                    // The loop's next move.
                    guard loop else { continue }
                    if !inPass {
                        log.append("loop: take")
                        if s.takePass() {
                            inPass = true
                            let wanted = localWanted
                            let work = s.passHasWork()
                            check(work || !wanted, "a pass skipped a change in the folder")
                            if work {
                                _ = s.handle(.pulled(upTo: s.announced), now: now)
                                _ = s.handle(.roundPlanned, now: now)
                                localWanted = false
                            } else {
                                inPass = false
                            }
                        } else {
                            loop = false
                            check(s.isQuiet, "the loop ended with a pass asked for")
                        }
                    } else {
                        if Bool.random(using: &rng) {
                            log.append("loop: round quiet")
                            _ = s.handle(.roundQuiet(stable: Bool.random(using: &rng)), now: now)
                        } else {
                            let online = Bool.random(using: &rng), progressed = Bool.random(using: &rng)
                            log.append("loop: round ran \(online ? "online" : "offline")\(progressed ? ", progressed" : "")")
                            let wait = progressed ? PassScheduler.firstRetry : s.retryDelay
                            apply(s.handle(.roundRan(online: online, progressed: progressed), now: now), for: online ? nil : wait)
                        }
                        inPass = false
                    }
                }
                check(s.retryDelay >= PassScheduler.firstRetry && s.retryDelay <= PassScheduler.longestRetry, "retry delay \(s.retryDelay)")
                check(s.loopRunning == loop, "the scheduler and the engine disagree on the loop")
            }
        }
    }
}
