import Foundation
import UbiqCore

/// When the engine runs passes, as a pure state machine: no clock, task, timer or I/O of its
/// own. The engine tells it what happened (`handle(_:now:)`, with the time) and carries out the
/// actions it answers — start the pass loop, arm a timer, forget cached manifests, reconnect the
/// push channel later. The pass loop asks it whether to run another pass (`takePass()`), whether
/// that pass has anything to look at (`passHasWork`), and whether the server announced news
/// while a round ran (`newsPending`). *When* lives here; *what* a pass does lives in the engine.
struct PassScheduler: Sendable {
    /// What happened.
    enum Event: Sendable, Equatable {
        /// A pass is wanted now or after a delay; `remoteOnly` when only the server may have news
        /// (the folder need not be scanned for it).
        case request(after: Duration?, remoteOnly: Bool)
        /// A timer armed by `Action.arm` went off.
        case timerFired(due: ContinuousClock.Instant)
        /// The folder watcher's events.
        case files([WatchEvent])
        /// The push channel said hello: the server is there.
        case hello
        /// The server announced changes in this container made by another device.
        case announced
        /// A step learned that the server's tree moved on (`item_changed`, a name taken): the
        /// next round pulls before planning.
        case pullFirst
        /// The Remote tree changed (a pull, by a pass or a command, brought something).
        case remoteChanged
        /// A pass read the change feed; it covers the announcements up to `upTo`.
        case pulled(upTo: Int)
        /// The change feed could not be read (the server is unreachable).
        case pullFailed
        /// The push channel closed.
        case pushClosed
        /// A round planned nothing to do; `stable` when no file was still being written.
        case roundQuiet(stable: Bool)
        /// A round's steps ran; `online` unless a step could not reach the server (the pass
        /// then ends, and another is tried after the retry delay); `progressed` if any step
        /// got done (the server is there: the delay starts again from its shortest).
        case roundRan(online: Bool, progressed: Bool)
        /// A round is about to be planned (what made the engine dirty is being looked at).
        case roundPlanned
        /// The user paused syncing (`true`) or resumed it: while paused no pass starts, and a
        /// running one is cancelled; what was asked for meanwhile runs on resume.
        case pause(Bool)
        /// The engine stops: no pass starts afterwards.
        case stop
    }

    /// What the engine should do.
    enum Action: Sendable, Equatable {
        /// Start the pass loop (there is none running).
        case startPassLoop
        /// Send `.timerFired(due:)` at `due`.
        case arm(due: ContinuousClock.Instant)
        /// The watcher lost events: cached manifests by stamp may be stale.
        case forgetManifests
        /// Reconnect the push channel after this delay.
        case reconnectPush(after: Duration)
        /// Cancel the running pass's network steps (paused).
        case cancelPass
    }

    /// How long a file must go without writes before it is hashed.
    let settleTime: Duration

    /// Files written recently (not yet closed), by path, with the time of the last write.
    private(set) var writing: [RelativePath: ContinuousClock.Instant] = [:]
    /// The armed timer, and whether the pass it asks for should scan the folder.
    private(set) var delayed: (due: ContinuousClock.Instant, local: Bool)?
    /// A pass loop is running (from `.startPassLoop` until `takePass()` answers false).
    private(set) var loopRunning = false
    /// A pass was asked for and has not started yet.
    private(set) var requested = false
    private(set) var stopped = false
    /// The user paused syncing.
    private(set) var paused = false
    /// Passes started so far.
    private(set) var passesStarted = 0
    /// Something may have changed in the folder since the last scan.
    private(set) var localDirty = true
    /// The Remote tree changed since the last plan.
    private(set) var remoteDirty = true
    /// The last pass ended with nothing left to do.
    private(set) var lastPassQuiet = false
    /// Announcements (and "pull first" notes) so far, and how many the last pull covered.
    private(set) var announced = 0
    private(set) var announcedPulled = 0
    /// The wait before a pass that could not reach the server is tried again (250 ms doubling to
    /// 15 s with each pass in a row that got nothing done; back to 250 ms when a round gets a
    /// step done, or the push channel says hello).
    private(set) var retryDelay: Duration = PassScheduler.firstRetry
    /// The push channel's reconnect delay (250 ms doubling to 4 s; the channel coming back is what
    /// tells a quiet device the server is there again, so it is tried more often than passes).
    private(set) var pushRetryDelay: Duration = PassScheduler.firstRetry

    static let firstRetry: Duration = .milliseconds(250)
    static let longestRetry: Duration = .seconds(15)
    static let longestPushRetry: Duration = .seconds(4)
    /// A burst of writes to one file asks for a pass after this long (the pass finds the file
    /// unsettled and keeps re-checking it).
    static let firstWriteDelay: Duration = .milliseconds(15)

    init(settleTime: Duration) { self.settleTime = settleTime }

    /// Takes in an event; answers what to do about it.
    mutating func handle(_ event: Event, now: ContinuousClock.Instant) -> [Action] {
        switch event {
        case .request(let after, let remoteOnly):
            return request(after: after, remoteOnly: remoteOnly, now: now)
        case .timerFired(let due):
            guard let d = delayed, d.due == due else { return [] }  // replaced by an earlier one
            delayed = nil
            return request(after: nil, remoteOnly: !d.local, now: now)
        case .files(let events):
            return files(events, now: now)
        case .hello:
            retryDelay = Self.firstRetry
            pushRetryDelay = Self.firstRetry
            return request(after: nil, remoteOnly: true, now: now)
        case .announced:
            announced += 1
            return request(after: nil, remoteOnly: true, now: now)
        case .pullFirst:
            announced += 1
            return []
        case .remoteChanged:
            remoteDirty = true
            return []
        case .pulled(let upTo):
            announcedPulled = upTo
            return []
        case .pullFailed:
            let actions = request(after: retryDelay, remoteOnly: false, now: now)
            retryDelay = min(retryDelay * 2, Self.longestRetry)
            return actions
        case .pushClosed:
            let d = pushRetryDelay
            pushRetryDelay = min(pushRetryDelay * 2, Self.longestPushRetry)
            return [.reconnectPush(after: d)]
        case .roundQuiet(let stable):
            lastPassQuiet = stable
            retryDelay = Self.firstRetry  // the server answered everything the round asked
            return []
        case .roundRan(let online, let progressed):
            if online || progressed { retryDelay = Self.firstRetry }
            guard !online else { return [] }
            let actions = request(after: retryDelay, remoteOnly: false, now: now)
            if !progressed { retryDelay = min(retryDelay * 2, Self.longestRetry) }
            return actions
        case .roundPlanned:
            localDirty = false
            remoteDirty = false
            return []
        case .pause(let on):
            guard on != paused else { return [] }
            paused = on
            if on { return loopRunning ? [.cancelPass] : [] }
            localDirty = true  // the folder was not looked at while paused
            return request(after: nil, remoteOnly: false, now: now)
        case .stop:
            stopped = true
            delayed = nil
            requested = false
            return []
        }
    }

    private mutating func request(after delay: Duration?, remoteOnly: Bool, now: ContinuousClock.Instant) -> [Action] {
        guard !stopped else { return [] }
        if let delay {
            // One timer at a time: a request due no earlier than the armed one joins it.
            let due = now + delay
            if let armed = delayed, armed.due <= due {
                if !remoteOnly { delayed?.local = true }
                return []
            }
            delayed = (due, !remoteOnly || (delayed?.local ?? false))
            return [.arm(due: due)]
        }
        if !remoteOnly { localDirty = true }
        requested = true
        if loopRunning || paused { return [] }
        loopRunning = true
        return [.startPassLoop]
    }

    private mutating func files(_ events: [WatchEvent], now: ContinuousClock.Instant) -> [Action] {
        var immediate = false, soon = false, overflow = false
        for e in events {
            switch e.kind {
            case .changed:
                if let p = e.path {
                    // Only the first write of a burst asks for a pass (a big file being written
                    // would otherwise start a pass, with its server round trip, every few ms).
                    if let t = writing[p], now - t < settleTime {} else { soon = true }
                    writing[p] = now
                } else {
                    soon = true
                }
            case .closedWrite:
                if let p = e.path { writing[p] = nil }
                immediate = true
            case .placed:
                // A rename ends a write (an atomic save, a file moved in): no settle wait. The
                // re-check after hashing still catches a writer at work on the file meanwhile.
                if let p = e.path { writing[p] = nil }
                immediate = true
            case .overflow:
                overflow = true
                immediate = true
            }
        }
        var actions: [Action] = overflow ? [.forgetManifests] : []
        if immediate {
            actions += request(after: nil, remoteOnly: false, now: now)
        } else if soon {
            actions += request(after: Self.firstWriteDelay, remoteOnly: false, now: now)
        }
        return actions
    }

    /// True while `path` was written less than the settle time ago.
    func isBeingWritten(_ path: RelativePath, now: ContinuousClock.Instant) -> Bool {
        guard let t = writing[path] else { return false }
        return now - t < settleTime
    }

    /// Asked by the pass loop before each pass: true (and the request is taken) if another pass
    /// should run; false ends the loop.
    mutating func takePass() -> Bool {
        guard requested && !stopped && !paused else {
            loopRunning = false
            return false
        }
        requested = false
        passesStarted += 1
        return true
    }

    /// After a pass's first pull: false when neither side can have changed since a pass that
    /// ended with nothing to do (the pass then stops there); true starts the pass's rounds.
    mutating func passHasWork() -> Bool {
        if !remoteDirty && !localDirty && lastPassQuiet { return false }
        lastPassQuiet = false
        return true
    }

    /// The server announced something the last pull did not cover.
    var newsPending: Bool { announced != announcedPulled }

    /// No pass is running or waiting to start (while paused, what waits for the resume does
    /// not count: a command waiting for quiet would wait for the user).
    var isQuiet: Bool { !loopRunning && (!requested || paused) }
}
