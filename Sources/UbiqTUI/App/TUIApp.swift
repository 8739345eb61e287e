import CTuiSupport
import Dispatch
import Foundation
import Logging
import UbiqCore
import UbiqEngine
import UbiqProtocol
#if canImport(Glibc)
import Glibc
#endif

/// The front end's run loop. The main queue owns the state and the terminal; engine
/// notifications hop to it and mark the screen dirty; one coalesced redraw repaints; nothing
/// here waits on the network (effects run in tasks and report back as events).
@MainActor
public final class TUIApp {
    let runtime: DeviceRuntime
    let terminal = CursesTerminal()
    var theme: Theme
    let ascii: Bool
    let wantColor: Bool
    let logger: Logger
    var state = AppState()
    var query: MetadataQuery?
    var redrawScheduled = false
    var finished: CheckedContinuation<Void, Never>?
    var timers: [DispatchSourceTimer] = []
    var signals: [DispatchSourceSignal] = []
    var wakePipe: [Int32] = [-1, -1]
    let drained = DispatchSemaphore(value: 0)
    var lastBytes: (Int64, ContinuousClock.Instant)?
    var throughput: Double = 0

    /// - Parameters:
    ///   - ascii: draw glyphs in their ASCII forms.
    ///   - wantColor: false for `NO_COLOR` / `--color never`.
    public init(runtime: DeviceRuntime, theme: Theme, ascii: Bool = false, wantColor: Bool = true, logger: Logger) {
        self.runtime = runtime
        self.theme = theme
        self.ascii = ascii
        self.wantColor = wantColor
        self.logger = logger
    }

    /// Runs until the user quits (or SIGINT/SIGTERM/SIGHUP); the terminal is restored on return.
    public func run(flash: String? = nil) async {
        terminal.start(wantColor: wantColor)
        if let flash { state.flash = Flash(text: flash, level: .warn) }
        startInput()
        startSignals()
        startTimers()
        redraw()
        Task { await self.startQuery() }
        Task { await self.startSettings() }
        await withCheckedContinuation { finished = $0 }
        shutdown()
    }

    /// Shows a message in the status line (used by `ubiq demo` to narrate).
    public func notify(_ text: String) {
        state.flash = Flash(text: text, level: .info)
        scheduleRedraw()
    }

    func shutdown() {
        for t in timers { t.cancel() }
        timers.removeAll()
        for s in signals { s.cancel() }
        signals.removeAll()
        terminal.stop()
        if wakePipe[1] >= 0 { close(wakePipe[1]); wakePipe[1] = -1 }
    }

    func finish() {
        finished?.resume()
        finished = nil
    }

    // MARK: input

    /// One thread waits in poll() on stdin and a wake pipe (SIGWINCH writes to it), never
    /// touching curses; the main queue drains the keys.
    func startInput() {
        pipe(&wakePipe)
        ubiq_install_winch(wakePipe[1])
        let wakeRead = wakePipe[0]
        let sem = drained
        let thread = Thread { [weak self] in
            var fds = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            while true {
                let n = poll(&fds, 2, -1)
                if n < 0 { if errno == EINTR { continue }; return }
                if fds[1].revents != 0 {
                    var b = [UInt8](repeating: 0, count: 64)
                    if read(wakeRead, &b, 64) <= 0 { return }
                }
                if fds[0].revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 && fds[0].revents & Int16(POLLIN) == 0 {
                    DispatchQueue.main.async { MainActor.assumeIsolated { self?.state.quit = true; self?.finish() } }
                    return
                }
                guard self != nil else { return }
                DispatchQueue.main.async { MainActor.assumeIsolated { self?.drainInput(); sem.signal() } }
                sem.wait()
            }
        }
        thread.start()
    }

    func drainInput() {
        guard terminal.started else { return }
        let keys = terminal.readKeys()
        var sawResize = false
        for k in keys {
            if k == .resize { sawResize = true; continue }
            if k == .ctrlL { terminal.invalidate(); continue }
            run(state.handle(k))
            if state.quit { finish(); return }
        }
        if sawResize { terminal.invalidate() }
        redraw()
    }

    func startSignals() {
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            signal(sig, SIG_IGN)
            let src = DispatchSource.makeSignalSource(signal: sig, queue: .main)
            src.setEventHandler { [weak self] in MainActor.assumeIsolated { self?.state.quit = true; self?.finish() } }
            src.resume()
            signals.append(src)
        }
    }

    func startTimers() {
        let t = DispatchSource.makeTimerSource(queue: .main)
        t.schedule(deadline: .now() + .milliseconds(100), repeating: .milliseconds(250))
        t.setEventHandler { [weak self] in MainActor.assumeIsolated { self?.tick() } }
        t.resume()
        timers.append(t)
    }

    /// Status, throughput and highlight expiry, four times a second.
    func tick() {
        if state.expireHighlights(now: Date()) { scheduleRedraw() }
        let engine = runtime.engine
        Task {
            let s = await engine.status()
            await MainActor.run {
                let done = s.uploads.bytesDone + s.downloads.bytesDone
                let now = ContinuousClock.now
                if let (b, t) = lastBytes, done >= b {
                    let dt = Double((now - t).components.attoseconds) / 1e18 + Double((now - t).components.seconds)
                    if dt > 0 { throughput = 0.6 * throughput + 0.4 * Double(done - b) / dt }
                } else {
                    throughput = 0
                }
                lastBytes = (done, now)
                if s.uploads.running + s.downloads.running == 0 { throughput = 0 }
                self.send(.status(s, throughput: throughput))
            }
        }
    }

    // MARK: engine

    func startQuery() async {
        let q = MetadataQuery(engine: runtime.engine, definition: MetadataQueryDefinition())
        query = q
        await q.start { [weak self] n in
            Task { @MainActor in
                switch n {
                case .didFinishGathering(let items): self?.send(.gathered(items))
                case .didUpdate(let d): self?.send(.update(d))
                }
            }
        }
    }

    func startSettings() async {
        let kv = runtime.kv
        _ = await kv.addListener { [weak self] c in
            Task { @MainActor in
                await self?.reloadSettings()
                self?.send(.settingsChanged(keys: c.keys, reason: c.reason, at: Date()))
            }
        }
        await reloadSettings()
    }

    func reloadSettings() async {
        let kv = runtime.kv
        let entries = await kv.allEntries()
        let usage = await kv.usage()
        send(.settings(entries, keys: usage.keys, bytes: usage.bytes))
    }

    func send(_ e: AppEvent) {
        run(state.apply(e))
        scheduleRedraw()
    }

    /// Runs effects in tasks; their results come back as events.
    func run(_ effects: [Effect]) {
        for e in effects { perform(e) }
    }

    func perform(_ effect: Effect) {
        let engine = runtime.engine, kv = runtime.kv
        func report(_ body: @escaping @Sendable () async throws -> AppEvent?) {
            Task {
                let event: AppEvent?
                do { event = try await body() } catch { event = .failed(DeviceResponse.describe(error)) }
                if let event { await MainActor.run { self.send(event) } }
            }
        }
        switch effect {
        case .quit: finish()
        case .syncNow:
            report { await engine.syncNow(); return .done("in sync") }
        case .download(let p):
            report {
                let r = await engine.download([p])
                return r.first?.error.map { .failed($0) } ?? .done("downloaded \(p.name)")
            }
        case .evict(let p):
            report {
                let r = await engine.evict([p])
                return r.first?.error.map { .failed($0) } ?? .done("evicted \(p.name): it stays in the cloud")
            }
        case .delete(let p):
            report {
                let r = await engine.remove([p])
                return r.first?.error.map { .failed($0) } ?? .done("deleted \(p.name) from all devices (in the trash for 30 days)")
            }
        case .loadVersions(let p):
            report { .versions(p, try await engine.versions(of: p)) }
        case .loadPreview(let p, let v, let current):
            report {
                let bytes = try await engine.versionContent(p, version: v.id)
                var cur: [String]?
                if let current, current.id != v.id { cur = LineDiff.textLines(try await engine.versionContent(p, version: current.id)) }
                if let lines = LineDiff.textLines(bytes) { return .preview(v.id, lines: lines, isText: true, currentText: cur) }
                return .preview(v.id, lines: LineDiff.hexDump(bytes), isText: false, currentText: nil)
            }
        case .resolve(let p, let v, let label):
            report {
                _ = try await engine.resolve(p, keep: v)
                return .done("kept the version from \(label) for \(p.name)")
            }
            state.versions = nil
        case .setValue(let key, let value):
            report {
                try await kv.setValues([key: value])
                let synced = await kv.synchronize()
                await self.reloadSettings()
                return .done(value == nil ? "deleted \(key)" : synced ? "saved \(key)" : "saved \(key) on this device (offline)")
            }
        }
    }

    // MARK: drawing

    func scheduleRedraw() {
        guard !redrawScheduled else { return }
        redrawScheduled = true
        DispatchQueue.main.async { MainActor.assumeIsolated { self.redrawScheduled = false; self.redraw() } }
    }

    func redraw() {
        guard terminal.started else { return }
        let (w, h) = terminal.size
        let screen = Renderer.render(state, width: w, height: h, context: RenderContext(theme: theme, ascii: ascii))
        terminal.draw(screen, theme: theme)
    }
}
