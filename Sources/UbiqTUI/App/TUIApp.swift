import CTuiSupport
import Dispatch
import Foundation
import Logging
import UbiqCore
import UbiqDaemonProtocol
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
    let connection: DeviceConnection
    /// The live query's and the settings watch's tasks, and which container showing they serve.
    var streams: [Task<Void, Never>] = []
    var generation = 0
    /// Tags this front end's own settings writes: the watch leaves them out and reports every
    /// other write on this device (`ubiq kv set` beside it) as a local change.
    let settingsOrigin = UUID().uuidString
    let terminal = CursesTerminal()
    var theme: Theme
    /// Where the theme came from (a name or a path): `Ctrl-R` reads it again.
    var themeSource = "default"
    let ascii: Bool
    let wantColor: Bool
    let logger: Logger
    var state = AppState()
    var query: LiveQuery?
    var redrawScheduled = false
    var finished: CheckedContinuation<Void, Never>?
    var timers: [DispatchSourceTimer] = []
    var signals: [DispatchSourceSignal] = []
    var wakePipe: [Int32] = [-1, -1]
    let drained = DispatchSemaphore(value: 0)
    var lastBytes: (Int64, ContinuousClock.Instant)?
    var throughput: Double = 0
    /// Where the folder last shown is remembered, and this screen's place in it (account,
    /// server, device, container: known once the first status came).
    let lastFolders = LastFolders()
    var folderKey: String?
    /// The screen last drawn: where a click lands.
    var lastScreen: ScreenBuffer?

    /// - Parameters:
    ///   - ascii: draw glyphs in their ASCII forms.
    ///   - wantColor: false for `NO_COLOR` / `--color never`.
    public init(connection: DeviceConnection, theme: Theme, ascii: Bool = false, wantColor: Bool = true, logger: Logger) {
        self.connection = connection
        self.theme = theme
        self.ascii = ascii
        self.wantColor = wantColor
        self.logger = logger
        state.engineInProcess = !connection.attachedToDaemon
    }

    /// Runs until the user quits (or SIGINT/SIGTERM/SIGHUP); the terminal is restored on return.
    public func run(flash: String? = nil) async {
        terminal.start(wantColor: wantColor)
        if let flash {
            logger.warning("\(flash)")
            state.flash = Flash(text: flash, level: .warn, sticky: true)
        }
        startInput()
        startSignals()
        startTimers()
        redraw()
        startStreams()
        await withCheckedContinuation { finished = $0 }
        shutdown()
    }

    /// The Files view's order and dotfiles as a person's config.toml asks (before `run`).
    public func useDefaults(sort: String, showHidden: Bool, themeSource: String = "default") {
        self.themeSource = themeSource
        if let key = FilesState.SortKey(rawValue: sort) { state.files.setSort(key) }
        state.files.setShowHidden(showHidden)
    }

    /// Whether quitting with changes still waiting asks first (a front end running the engine
    /// itself; `ubiq demo` does not ask: its folders go with it).
    public var asksBeforeQuitting: Bool {
        get { state.engineInProcess }
        set { state.engineInProcess = newValue }
    }

    /// Shows a message in the status line (used by `ubiq demo` to narrate).
    public func notify(_ text: String) {
        guard state.flash?.sticky != true else { return }
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
        if let key = folderKey { lastFolders.remember(state.files.folder?.string, for: key) }
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
        for var k in keys {
            if k == .resize { sawResize = true; continue }
            if k == .ctrlL { terminal.invalidate(); continue }
            if case .click(let x, let y) = k {
                // What is under the click on the screen last drawn (a tab, a row); nothing while
                // a box or a question is open over it.
                guard state.prompt == nil, state.confirm == nil, !state.help, state.picker == nil,
                      let mapped = lastScreen?.key(atX: x, y: y) else { continue }
                k = mapped
            }
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

    /// Status, throughput, highlight and message expiry, four times a second.
    func tick() {
        if state.expireTimed(now: Date()) { scheduleRedraw() }
        let connection = self.connection
        Task {
            guard let s = await connection.ask(.status).status else { return }
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
                self.lookUpLastFolder(s)
            }
        }
    }

    /// The first status names this screen's place: the folder shown when it was last quit is
    /// opened once the listing has it.
    func lookUpLastFolder(_ s: EngineStatus) {
        guard folderKey == nil, let account = s.account, let server = s.server else { return }
        // After a switch, a status of the container left behind may still come: not this screen's.
        if let chosen = connection.choice.value?.string, s.container != chosen { return }
        let key = "\(account)@\(server) \(s.device ?? "") \(s.container ?? "")"
        folderKey = key
        guard let folder = lastFolders.folder(for: key), let path = try? RelativePath(validating: folder) else { return }
        state.folderToRestore = path
        state.restoreFolderIfListed()
        scheduleRedraw()
    }

    // MARK: engine

    /// The live query and the settings watch of the container shown (again after a switch:
    /// the old streams end, and whatever they still deliver is dropped).
    func startStreams() {
        streams.forEach { $0.cancel() }
        generation += 1
        let g = generation
        streams = [Task { await self.startQuery(g) }, Task { await self.startSettings(g) }]
    }

    /// The live query (everything in the `data` scope), streamed for as long as the app runs.
    func startQuery(_ g: Int) async {
        let r = await connection.send(.watch(query: QuerySpec())) { [weak self] response in
            guard let e = response.event else { return true }
            return await MainActor.run {
                guard let self, self.finished != nil, self.generation == g else { return false }
                if e.event == "gathered" { self.send(.gathered(e.added)) } else {
                    self.send(.update(QueryDiff(added: e.added, changed: e.changed, removed: e.removed)))
                }
                return true
            }
        }
        if !r.ok, generation == g { send(.failed(r.message ?? "the live query stopped", code: r.errorCode)) }
    }

    /// Settings now, then each change made elsewhere.
    func startSettings(_ g: Int) async {
        await reloadSettings()
        _ = await connection.send(.kvWatch(local: settingsOrigin)) { [weak self] response in
            guard let c = response.kvChange else { return true }
            guard await MainActor.run(body: { self?.generation == g }) else { return false }
            await self?.reloadSettings()
            return await MainActor.run {
                guard let self, self.finished != nil, self.generation == g else { return false }
                self.send(.settingsChanged(keys: c.keys, reason: c.reason, at: Date()))
                return true
            }
        }
    }

    func reloadSettings() async {
        let entries = await connection.ask(.kvList).kv ?? []
        // Names for who changed each key: asked again when a device is new to this screen.
        if entries.contains(where: { state.settings.deviceNames[$0.device] == nil }), let list = await connection.ask(.devices).devices {
            send(.devices(list))
        }
        var store: [String: KVValue] = [:]
        for e in entries { if let v = e.value { store[e.key] = v } }
        send(.settings(entries, keys: store.count, bytes: KVLimits.totalBytes(store)))
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
        let connection = self.connection
        /// Runs a request and turns its answer into an event.
        func request(_ r: DeviceRequest, _ done: @escaping @Sendable (DeviceResponse) -> AppEvent?) {
            Task {
                let answer = await connection.ask(r)
                let event = answer.ok ? done(answer) : .failed(answer.message ?? "failed", code: answer.errorCode)
                if let event { await MainActor.run { self.send(event) } }
            }
        }
        switch effect {
        case .quit: finish()
        case .syncNow:
            request(.sync) { _ in .done("in sync") }
        case .download(let p):
            request(.download(paths: [p.string])) { _ in .done("downloaded \(p.name)") }
        case .pause(let on):
            request(.pause(on: on)) { r in .done(r.message ?? (on ? "paused" : "resumed")) }
        case .retry(let paths):
            request(.retry(paths: paths.map(\.string))) { r in .done(r.message ?? "trying again") }
        case .cancelTransfers(let paths):
            let what = paths.count == 1 ? paths[0].name : "\(paths.count) items"
            request(.cancel(paths: paths.map(\.string))) { _ in .done("cancelled: \(what) stays in the cloud (f fetches it)") }
        case .hold(let paths, let on):
            let what = paths.count == 1 ? paths[0].name : "\(paths.count) items"
            request(.hold(paths: paths.map(\.string), on: on)) { _ in .done(on ? "paused the transfers of \(what) (P on them resumes)" : "resumed the transfers of \(what)") }
        case .pin(let paths, let on):
            let what = paths.count == 1 ? paths[0].name : "\(paths.count) items"
            request(.pin(paths: paths.map(\.string), on: on)) { _ in .done(on ? "pinned \(what): kept on this device" : "unpinned \(what)") }
        case .evict(let p):
            request(.evict(paths: [p.string])) { _ in .done("evicted \(p.name): it stays in the cloud") }
        case .delete(let p):
            request(.remove(paths: [p.string])) { _ in .filesDone("deleted \(p.name) from all devices (in the trash for 30 days; z restores it)", undo: .deleted(p)) }
        case .loadVersions(let p):
            request(.versions(path: p.string)) { r in r.versions.map { .versions(p, $0) } ?? .failed("no versions") }
        case .loadPreview(let p, let v, let current):
            Task {
                let limit = 64 << 10
                let mine = await connection.ask(.versionContent(path: p.string, version: v.id.description, limit: limit))
                guard mine.ok, let bytes = mine.content.map({ [UInt8]($0) }) else {
                    await MainActor.run { self.send(.failed(mine.message ?? "no preview", code: mine.errorCode)) }
                    return
                }
                var cur: [String]?
                if let current, current.id != v.id,
                   let data = await connection.ask(.versionContent(path: p.string, version: current.id.description, limit: limit)).content {
                    cur = LineDiff.textLines([UInt8](data))
                }
                let event: AppEvent = LineDiff.textLines(bytes).map { .preview(v.id, lines: $0, isText: true, currentText: cur) }
                    ?? .preview(v.id, lines: LineDiff.hexDump(bytes), isText: false, currentText: nil)
                await MainActor.run { self.send(event) }
            }
        case .listContainers:
            let connection = self.connection
            Task {
                let r = await connection.ask(.containers)
                await MainActor.run {
                    guard r.ok, let list = r.containers, !list.isEmpty else {
                        self.send(.failed(r.message ?? "no containers", code: r.errorCode))
                        return
                    }
                    self.send(.containers(list, shown: connection.choice.value?.string))
                }
            }
        case .switchContainer(let id):
            guard connection.switchable else {
                state.flash = Flash(text: "this engine syncs one container (start 'ubiq daemon' for several)", level: .warn)
                scheduleRedraw()
                return
            }
            // The folder shown is the old container's: remembered under its key; the new
            // container's key (and its last folder) comes with its first status.
            if let key = folderKey { lastFolders.remember(state.files.folder?.string, for: key) }
            folderKey = nil
            connection.choice.value = id
            state.forgetContainer()
            startStreams()
            state.flash = Flash(text: "container \(id)", level: .info)
            scheduleRedraw()
        case .setTheme(let name):
            do {
                theme = try ThemeLoader.standard().load(name)
                themeSource = name
                terminal.invalidate()
                send(.done("theme \(theme.name)"))
            } catch {
                send(.failed("theme '\(name)': \((error as? ThemeError)?.reason ?? "\(error)")"))
            }
        case .reloadLook:
            do {
                let config = try UserConfig.load()
                theme = try ThemeLoader.standard().load(themeSource)
                if let sort = config.sort.flatMap(FilesState.SortKey.init(rawValue:)) { state.files.setSort(sort) }
                if let hidden = config.showHidden { state.files.setShowHidden(hidden) }
                terminal.invalidate()
                send(.done("read theme \(theme.name) and config.toml again"))
            } catch {
                send(.failed((error as? ThemeError)?.reason ?? "\(error)"))
            }
        case .loadTrash:
            request(.trash) { r in .trash(r.trash ?? []) }
        case .restore(let p):
            Task {
                let r = await connection.ask(.restore(path: p.string))
                let t = await connection.ask(.trash)
                await MainActor.run {
                    self.send(.trash(t.trash ?? []))
                    self.send(r.ok ? .done("restored \(r.item?.path.string ?? p.string) on every device") : .failed(r.message ?? "not restored", code: r.errorCode))
                }
            }
        case .emptyTrash:
            Task {
                let r = await connection.ask(.emptyTrash)
                let t = await connection.ask(.trash)
                await MainActor.run {
                    self.send(.trash(t.trash ?? []))
                    self.send(r.ok ? .done("purged \(Counted.of(r.emptied?.items ?? 0, "item")); \(ByteSize.format(r.emptied?.bytes ?? 0)) given back") : .failed(r.message ?? "not purged", code: r.errorCode))
                }
            }
        case .approveDevice(let code):
            Task {
                let r = await connection.ask(.approveDevice(code: code))
                await MainActor.run { self.send(r.ok ? .done(r.message ?? "approved") : .failed(r.message ?? "not approved", code: r.errorCode)) }
            }
        case .edit(let p, let absolute, let fetch):
            Task {
                if fetch {
                    let r = await connection.ask(.download(paths: [p.string]))
                    guard r.ok else { await MainActor.run { self.send(.failed(r.message ?? "\(p.name) could not be fetched", code: r.errorCode)) }; return }
                }
                await MainActor.run { self.editInTerminal(absolute, name: p.name) }
            }
        case .openVersion(let p, let record):
            openVersion(p, record)
        case .open(let absolute):
            let status = ExternalProgram.spawn(["xdg-open", absolute], quiet: true)
            send(status == nil ? .done("opening \(absolute.split(separator: "/").last ?? "")") : .failed("xdg-open: \(status!)"))
        case .copy(let text):
            terminal.copyToClipboard(text)
        case .suspend:
            terminal.suspend()
            // SIGSTOP, not SIGTSTP: it cannot be blocked by a thread's mask. The whole process
            // stops here until the shell's `fg` (SIGCONT); the redraw waits for that even when
            // the stop takes hold after `kill` returns (under load it did: the screen was drawn
            // before the stop and never after `fg`).
            _ = ubiq_stop_until_continued()
            terminal.resume()
            redraw()
        case .rename(let p, let name):
            request(.rename(path: p.string, name: name)) { _ in
                let to = (try? p.parent.map { try $0.appending(name) } ?? RelativePath(validating: name)) ?? p
                return .filesDone("renamed \(p.name) to \(name) (z renames it back)", undo: .renamed(from: p, to: to))
            }
        case .renameBack(let p, let name):
            request(.rename(path: p.string, name: name)) { _ in .done("renamed \(p.name) back to \(name)") }
        case .makeFolder(let p):
            request(.makeFolder(path: p.string)) { _ in .done("made the folder \(p.name)") }
        case .merge(let p, let conflict):
            Task {
                let r = await connection.ask(.mergeDraft(path: p.string, version: conflict?.description))
                guard r.ok, let draft = r.merge else { await MainActor.run { self.send(.failed(r.message ?? "not merged", code: r.errorCode)) }; return }
                await MainActor.run { self.mergeInEditor(draft) }
            }
        case .clearChoices:
            state.choices = ConflictChoices()
        case .decide(let p, let choice):
            Task {
                let answer: DeviceResponse
                switch choice {
                case .both:
                    answer = await connection.ask(.keepBoth(path: p.string))
                case .current, .conflict, .newer, .older:
                    let v = await connection.ask(.versions(path: p.string))
                    guard let list = v.versions else { await MainActor.run { self.send(.failed(v.message ?? "\(p.name): no versions", code: v.errorCode)) }; return }
                    let all = [list.current].compactMap { $0 } + list.conflicts
                    let keep: VersionRecord? = switch choice {
                    case .current: list.current
                    case .newer: all.max { $0.modified < $1.modified }
                    case .older: all.min { $0.modified < $1.modified }
                    default: list.conflicts.count == 1 ? list.conflicts.first : nil
                    }
                    guard let keep else {
                        await MainActor.run { self.send(.failed("\(p.name) has \(list.conflicts.count) conflict versions: open it (Enter) to pick one")) }
                        return
                    }
                    answer = await connection.ask(.resolve(path: p.string, keep: keep.id.description))
                }
                await MainActor.run { self.send(answer.ok ? .done("\(choice.label): \(p.name)") : .failed("\(p.name): \(answer.message ?? "not resolved")")) }
            }
        case .keepBoth(let p):
            request(.keepBoth(path: p.string)) { r in .done("kept both: \((r.results ?? []).map { String($0.path.split(separator: "/").last ?? "") }.joined(separator: ", "))") }
            state.versions = nil
        case .resolve(let p, let v, let label):
            request(.resolve(path: p.string, keep: v.description)) { _ in .done("kept the version from \(label) for \(p.name)") }
            state.versions = nil
        case .editStore:
            editStoreInEditor()
        case .loadKeyHistory(let key):
            Task {
                let r = await connection.ask(.kvHistory(key: key))
                await MainActor.run {
                    self.send(.keyHistory(key: key, entries: r.ok ? (r.kv ?? []) : nil, devices: r.devices, error: r.ok ? nil : (r.message ?? "no history")))
                }
            }
        case .renameKey(let from, let to, let value):
            writeSettings([to: value, from: nil], what: "renamed \(from) to \(to)")
        case .undoSettings(let previous, let what):
            writeSettings(previous, what: "undid: \(what)", undoable: false)
        case .setValue(let key, let value):
            writeSettings([key: value], what: value == nil ? "deleted \(key)" : "saved \(key)")
        }
    }

    /// Hands the terminal to the editor until it exits, then takes it back.
    func editInTerminal(_ absolute: String, name: String) {
        terminal.suspend()
        let result = ExternalProgram.edit(absolute)
        terminal.resume()
        send(result == 0 ? .done("edited \(name); the change goes up when saved") : .failed("the editor ended with status \(result)"))
        redraw()
    }

    /// Hands the terminal to the editor on a merge, then keeps what it left (unless markers
    /// remain or the editor failed: then nothing is kept and the message says where the file is).
    func mergeInEditor(_ draft: MergeDraft) {
        let file: URL
        do { file = try draft.writeDraftFile() } catch { send(.failed("cannot write the merge: \(error)")); return }
        terminal.suspend()
        let status = ExternalProgram.edit(file.path)
        terminal.resume()
        redraw()
        switch MergeDraft.edited(file, editorStatus: status) {
        case .failure(let e): send(.failed(e.message))
        case .success(let text):
            let connection = self.connection
            let done = "merged \(draft.path.name)\(draft.conflicts > 0 ? " (\(Counted.of(draft.conflicts, "hunk")) settled)" : "")"
            Task {
                let r = await connection.ask(.keepMerge(draft: draft, text: text))
                await MainActor.run { self.send(r.ok ? .done(done) : .failed(r.message ?? "not merged", code: r.errorCode)) }
            }
            state.versions = nil
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
        state.pageRows = Renderer.listRows(height: h, state)
        (state.screenWidth, state.screenHeight) = (w, h)
        let screen = Renderer.render(state, width: w, height: h, context: RenderContext(theme: theme, ascii: ascii))
        terminal.draw(screen, theme: theme)
        lastScreen = screen
    }
}
