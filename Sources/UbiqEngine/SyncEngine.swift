import Dispatch
import Foundation
import Logging
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol
import UbiqProtocol
import UbiqTransport

/// The sync engine for one container of one device. An actor whose executor is one serial
/// Dispatch queue (the control queue): it owns the three trees. The watcher, hashing and
/// transfers run elsewhere and post their results back by calling into it.
public actor SyncEngine {
    private let executor: QueueExecutor
    var queue: DispatchQueue { executor.queue }
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    public let home: DeviceHome
    public let config: DeviceConfig
    /// The server (the real client, or a test's stand-in).
    let client: any SyncServer
    /// An encrypted account's keys for this container (nil: a plain account); shared with the
    /// settings replica, updated when another device rolls the account's key.
    public nonisolated let keyring: SharedKeyring?
    /// On an encrypted account: the names of devices waiting to be let in (the device runtime
    /// keeps it current; `status()` reports it).
    public nonisolated let joining = JoiningDevices()
    let store: EngineStore
    let files: LocalFiles
    /// Paths programs hold under coordination (see ``Coordination``).
    public nonisolated let coordination = Coordination()
    /// Every change this engine makes to the folder goes through it (tests: a failing disk).
    private let disk: any FolderAccess
    /// The plan's local steps and the other changes to the folder (see `LocalSteps`).
    let steps: LocalSteps
    let logger: Logger
    let settleTime: Duration
    /// The wall clock (tests: a clock of their own): new IDs' time order, merges' modification
    /// dates, failures' times, listings' "now".
    let now: @Sendable () -> Date
    /// 64 random bits for new IDs (tests: a seeded source).
    let random: @Sendable () -> UInt64

    /// The three trees, the change-feed cursor and their writes to the state database.
    let trees: ItemTrees
    var changeLog: ChangeLog { trees.changeLog }
    var synced: TrackedMap<SyncedEntry> { get { trees.synced } _modify { yield &trees.synced } }
    var remote: TrackedMap<RemoteEntry> { get { trees.remote } _modify { yield &trees.remote } }
    var local: TrackedMap<(path: RelativePath, entry: LocalEntry)> { get { trees.local } _modify { yield &trees.local } }
    var localHashes: TrackedMap<ContentHash> { get { trees.localHashes } _modify { yield &trees.localHashes } }
    var cursor: Int64 { trees.cursor }
    /// Files swapped out by downloads may be held in the partial folder (see `HeldFiles`).
    var heldCheckDue = true
    /// Pulls of the change feed take turns: a page fetched earlier is never applied over a later one.
    var pullTurn = Turnstile()
    /// Content kept on an on-demand device / dropped on request (see `DownloadWishes`).
    let wishes: DownloadWishes
    var evicted: Set<ItemID> { wishes.evicted }

    /// New items' IDs, claims, unanswered commits and moves (see `ItemIdentity`).
    var identity: ItemIdentity
    var sent: SentCommits { get { identity.sent } _modify { yield &identity.sent } }
    /// Manifests by stamp, and the bytes of small files the last scan kept for uploads (see `Transfers`).
    var contents: ContentCache { get { transfers.contents } _modify { yield &transfers.contents } }

    /// When passes run (requests, timers, settling files, retry delays): see `PassScheduler`.
    var scheduler: PassScheduler
    /// Scans take turns (see `scanLocal`).
    var scanTurn = Turnstile()
    /// When the folder was last read whole (see `folderKnownUnchanged`).
    var scans: FolderScans
    /// The task running passes (cancelled by `stop`).
    private var passTask: Task<Void, Never>?
    /// Passes started so far (each begins with a server round trip).
    var passesStarted: Int { scheduler.passesStarted }
    var stopped: Bool { scheduler.stopped }

    // Connection, passes, transfers.
    var online = false
    var pendingOps: [SyncOp] = [] { didSet { transfers.planned(pendingOps) } }
    var unstable = 0
    /// The plan's steps on the server that move no content (see `RemoteStepRunner`).
    private(set) lazy var remoteSteps = RemoteStepRunner(host: self, trees: trees, steps: RemoteSteps(server: client, container: config.container), logger: logger)
    /// The user's commands (see `EngineCommands`).
    private(set) lazy var commands = EngineCommands(host: self, trees: trees, transfers: transfers, wishes: wishes, outcomes: outcomes, steps: steps,
                                                    files: files, client: client, config: config, home: home, now: now)
    /// Uploads and downloads, and what only they keep (see `Transfers`).
    private(set) lazy var transfers = Transfers(host: self, client: client, container: config.container, partials: home.partialFolder(config.container).path,
                                                trees: trees, store: store, files: files, steps: steps, disk: disk, coordination: coordination,
                                                settleTime: settleTime, logger: logger)
    var lastError: String?
    /// Failed items (messages, retry delays) and abandoned versions: see `ItemOutcomes`.
    let outcomes: ItemOutcomes
    private var waiters: [CheckedContinuation<Void, Never>] = []
    var watcher: DirectoryWatcher?
    private var backgroundTasks: [Task<Void, Never>] = []
    /// The watcher's count of events not made by this engine, read just before the last scan.
    var foreignAtScan: UInt64?
    /// Paused, a scan of the folder is due (file events came; see `scanWhilePaused`).
    private var pausedScanDue = false
    /// Listeners for every push message (the key-value store follows `kv` and `hello`).
    private var pushListeners: [@Sendable (PushMessage) -> Void] = []

    /// Opens the engine's state for the configured container (creating folders as needed).
    /// `server` stands in for the configured server's client (tests: a server that loses
    /// requests), `disk` for the folder's file system (tests: a disk that fails).
    public init(home: DeviceHome, config: DeviceConfig, server: (any SyncServer)? = nil, disk: any FolderAccess = SystemFolder(),
                logger: Logger = Logger(label: "ubiq.engine"), settleTime: Duration = .seconds(2), now: @escaping @Sendable () -> Date = { Date() },
                random: @escaping @Sendable () -> UInt64 = { .random(in: .min ... .max) }, fullScanEvery: Duration = FolderScans.standardFullEvery,
                watchLimit: Int? = nil) throws {
        self.executor = QueueExecutor(label: "ubiq.engine.\(config.container)")
        self.home = home
        self.config = config
        self.logger = logger
        self.settleTime = settleTime
        self.scans = FolderScans(fullEvery: fullScanEvery, watchLimit: watchLimit)
        self.now = now
        self.random = random
        self.scheduler = PassScheduler(settleTime: settleTime)
        guard config.encrypting != true else {
            throw EngineError(.invalidRequest, "this device is encrypting the account and has not finished: run 'ubiq encrypt' again to finish it")
        }
        let plain = server ?? config.apiClient
        let keys = try config.keyring().map { SharedKeyring($0, container: config.container) }
        self.keyring = keys
        self.client = keys.map { SealedSyncServer(inner: plain, keyring: $0) } ?? plain
        let folder = home.containerFolder(config.container)
        do {
            try PrivateDirectory.make(home.stateDirectory)
            try FileManager.default.createDirectory(at: folder.appendingPathComponent("Documents"), withIntermediateDirectories: true)
            // Partial downloads, files set aside and held: only this user may enter (#45 row 4).
            try PrivateDirectory.make(home.partialFolder(config.container))
        } catch {
            throw EngineError(.storageFailure, "cannot create \(folder.path): \(error.localizedDescription)")
        }
        self.files = LocalFiles(root: folder, chunker: Chunker.standard.named(keys.map { ChunkNaming(keys: $0, keepsSealed: true) } ?? .plain))
        self.disk = disk.anchored(at: files.rootPath)
        let loadStart = ContinuousClock.now
        let store = try EngineStore(path: home.stateDatabase(config.container).path)
        self.store = store
        let trees = try ItemTrees(store: store)
        self.trees = trees
        self.steps = LocalSteps(files: files, disk: disk, trees: trees, aside: home.partialFolder(config.container).path, logger: logger)
        self.wishes = try DownloadWishes(store: store)
        self.outcomes = ItemOutcomes(log: trees.changeLog, abandonedText: try store.meta("abandoned"))
        self.identity = try ItemIdentity(store: store)
        let counts = (trees.synced.count, trees.remote.count)
        logger.debug("loaded \(counts.0) synced and \(counts.1) remote items in \(ContinuousClock.now - loadStart)")
    }

    /// The container folder.
    public nonisolated var folder: URL { home.containerFolder(config.container) }

    // MARK: lifecycle

    /// Watches the folder and keeps the push channel open; passes run on every change.
    public func start() {
        let w = DirectoryWatcher(root: folder.path, limit: scans.watchLimit) { [weak self] events in
            guard let self else { return }
            Task { await self.noteEvents(events) }
        }
        if w.start() { watcher = w } else { logger.warning("inotify unavailable; relying on periodic scans") }
        backgroundTasks.append(Task { await self.pushLoop() })
        backgroundTasks.append(Task { await self.periodicLoop() })
        requestPass()
    }

    /// Stops watching and listening, cancels the network step of a pass in progress (a request
    /// stuck behind a slow server would otherwise hold the stop for its whole timeout) and waits
    /// for the pass to end; no pass runs afterwards. Local file steps run to their end: the
    /// engine is safe to stop at any point, as after a crash.
    public func stop() async {
        _ = scheduler.handle(.stop, now: .now)
        watcher?.stop()
        watcher = nil
        for t in backgroundTasks { t.cancel() }
        backgroundTasks.removeAll()
        passTask?.cancel()
        if scheduler.loopRunning { await withCheckedContinuation { c in waiters.append(c) } }
    }

    func noteEvents(_ events: [WatchEvent]) {
        logger.trace("\(events.count) file event(s)")
        schedule(.files(events))
        if scheduler.paused { scanWhilePaused() }
    }

    /// Paused, nothing syncs, but the folder is still read (a settle time after its events):
    /// what changed in it is listed as waiting, as it is offline (#44 row 2: edited files kept
    /// their old size and `✓`, and new ones did not appear until the resume).
    func scanWhilePaused() {
        guard !pausedScanDue else { return }
        pausedScanDue = true
        Task {
            try? await Task.sleep(for: settleTime)
            pausedScanDue = false
            guard scheduler.paused, !stopped else { return }
            await scanLocal()
        }
    }

    /// Hands an event to the scheduler and carries out what it answers.
    func schedule(_ event: PassScheduler.Event) {
        for action in scheduler.handle(event, now: .now) {
            switch action {
            case .startPassLoop: passTask = Task { await self.runPasses() }
            case .arm(let due): Task { try? await Task.sleep(until: due); self.schedule(.timerFired(due: due)) }
            case .forgetManifests: contents.forgetManifests()
            case .reconnectPush: break  // the push loop waits for it itself (see `pushLoop`)
            case .cancelPass: passTask?.cancel()
            }
        }
    }

    func pushLoop() async {
        while !Task.isCancelled {
            do {
                try await client.listen(logger: logger) { [weak self] message in
                    guard let self else { return }
                    await self.onPush(message)
                }
            } catch {
                logger.debug("push channel: \(error)")
            }
            if Task.isCancelled { return }
            markOffline(String(describing: "push channel closed"))
            for case .reconnectPush(let delay) in scheduler.handle(.pushClosed, now: .now) { try? await Task.sleep(for: delay) }
        }
    }

    /// Adds a listener for the push channel's messages (called on the control queue).
    public func addPushListener(_ body: @escaping @Sendable (PushMessage) -> Void) { pushListeners.append(body) }

    func onPush(_ m: PushMessage) {
        for l in pushListeners { l(m) }
        switch m.kind {
        case .hello:
            schedule(.hello)
        case .changes:
            if m.container == config.container && m.origin != config.deviceID { schedule(.announced) }
        case .kv, .keys:
            break  // the settings replica's, and the device runtime's (a rolled key)
        }
    }

    func periodicLoop() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(30))
            requestPass()
        }
    }

    func markOffline(_ reason: String) {
        if online { logger.info("offline: \(reason)") }
        online = false
    }

    // MARK: passes

    /// Pauses syncing (no pass starts; the running one's transfers are cancelled, what they
    /// wrote kept for their next attempt) or resumes it. Until the engine stops: a restart syncs.
    public func setPaused(_ on: Bool) {
        schedule(.pause(on))
        if on { logger.info("syncing paused") } else { logger.info("syncing resumed") }
    }

    /// Asks for a pass (coalesced with one already running).
    public func requestPass(after delay: Duration? = nil) {
        requestPass(after: delay, remoteOnly: false)
    }

    /// Asks for a pass; `remoteOnly` when only the server may have something new.
    func requestPass(after delay: Duration? = nil, remoteOnly: Bool) {
        schedule(.request(after: delay, remoteOnly: remoteOnly))
    }

    func runPasses() async {
        while scheduler.takePass() { await pass() }
        passTask = nil
        // Quiet: the next transfers are a run of their own (see `TransferSession`).
        if transfers.running.isEmpty { transfers.session = TransferSession() }
        let w = waiters
        waiters.removeAll()
        for c in w { c.resume() }
    }

    /// One full pass: pull the server's changes, scan the folder, plan and execute until quiet.
    func pass() async {
        dispatchPrecondition(condition: .onQueue(queue))
        defer { settleHeldFiles() }
        guard await pullForPass() else {
            // Offline: the folder is still read, so the query lists what waits to go up (files
            // made while the server was down appeared only once it was back).
            let foreign = watcher?.foreignEvents()
            if foreign == nil || foreign != foreignAtScan || unstable > 0 {
                foreignAtScan = foreign
                await scanLocal()
            }
            return
        }
        guard scheduler.passHasWork() else { return }
        for round in 0..<25 where !stopped {
            // The server announced changes while the last batch ran: read them before planning
            // again, so downloads keep flowing instead of waiting for the next pass.
            if round > 0 && scheduler.newsPending {
                guard await pullForPass() else { return }
            }
            schedule(.roundPlanned)
            let t0 = ContinuousClock.now
            // After the first round the folder is scanned again only if something other than
            // this engine's own downloads happened in it (the watcher counts that synchronously).
            let foreign = watcher?.foreignEvents()
            if (round == 0 && !folderKnownUnchanged()) || unstable > 0 || foreign == nil || foreign != foreignAtScan {
                foreignAtScan = foreign
                await scanLocal()
            }
            let t1 = ContinuousClock.now
            trees.planCursor = cursor
            let ops = plan()
            pendingOps = ops
            if ops.isEmpty {
                logger.debug("pass: scan \(t1 - t0), plan \(ContinuousClock.now - t1), nothing to do")
                schedule(.roundQuiet(stable: unstable == 0))
                break
            }
            let progressed = await execute(ops)
            logger.debug("pass: scan \(t1 - t0), plan+execute \(ContinuousClock.now - t1), \(ops.count) op(s)")
            schedule(.roundRan(online: online, progressed: progressed))
            if !online { break }
            if !progressed { break }
        }
        pendingOps = []
        transfers.cancelled.removeAll()
        contents.dropKept()  // what the pass did not upload is not kept
        if unstable > 0 { requestPass(after: .milliseconds(200)) }
    }

    /// True when reading the folder again would find what the last scan found (see
    /// `FolderScans.unchanged`).
    func folderKnownUnchanged() -> Bool {
        scans.unchanged(watcher, foreignAtScan: foreignAtScan, settled: unstable == 0 && outcomes.errors.isEmpty, now: .now)
    }

    /// Pulls the change feed for a pass; on failure marks the engine offline and schedules a
    /// retry. True if the pass may go on.
    func pullForPass() async -> Bool {
        let upTo = scheduler.announced
        do {
            try await pullRemote()
            logger.trace("pass: pulled the server's changes")
            schedule(.pulled(upTo: upTo))
            online = true
            lastError = nil
            return true
        } catch {
            markOffline("\(error)")
            lastError = "\(error)"
            schedule(.pullFailed)
            return false
        }
    }

    /// Plans a batch from the current trees, first dropping eviction marks that no longer apply
    /// (the item has local content again, or is gone from the server).
    func plan() -> [SyncOp] {
        adoptOwnVersions()
        do { try wishes.forgetEvictions { local[$0] != nil || remote[$0] == nil } } catch { logger.warning("\(error)") }
        let t = trees.forPlanner()
        let abandoned = abandonedVersions()
        let policy: Planner.Policy = config.download == .all ? .all : .onDemand, pinned = wishes.pinned, pinnedFolders = wishes.pinnedFolderPaths(remote: remote), streaming = transfers.streamable(among: trees.openItems)
        var ops = withoutWaiting(Planner.plan(t, policy: policy, pinned: pinned, pinnedFolders: pinnedFolders, evicted: evicted, streaming: streaming, abandoned: abandoned,
                                              only: trees.openItems, byPath: (trees.remoteByPath, trees.localByPath, trees.syncedByPath)))
        if !transfers.held.isEmpty { ops.removeAll { $0.isTransfer && transfers.held.contains($0.item) } }
        if !coordination.isEmpty {
            ops.removeAll { op in
                [local[op.item]?.path, remote[op.item]?.node.path, synced[op.item]?.node.path].contains { $0.map { coordination.covers($0.string) } ?? false }
            }
        }
        for case .createLocalFolder(let id) in ops {
            guard let s = t.synced[id], t.local[id] == nil, let r = t.remote[id] else { continue }
            let news = Planner.news(in: t, under: r.path, deletedAt: s.path, wanted: { _ in true }, abandoned: abandoned)
            logger.info("\(r.path) was deleted here but comes back: the server has \(news.flatMap { t.remote[$0]?.path.string } ?? "something") in it that this device never saw (\(news.map { "\($0): synced \(t.synced[$0].map { "\($0.path) \($0.version.map(String.init(describing:)) ?? "-")" } ?? "never"), server \(t.remote[$0].map { $0.version.map(String.init(describing:)) ?? "-" } ?? "-")" } ?? ""))")
        }
        return ops
    }

    /// Runs one pass now and waits for it (and any pass it triggers) to finish.
    public func syncNow() async {
        scans.lastFull = nil  // asked to sync: the pass reads the whole folder
        requestPass()
        await withCheckedContinuation { c in
            if scheduler.isQuiet { c.resume() } else { waiters.append(c) }
        }
    }

    // MARK: observers

    /// Registers a callback run (on the control queue) whenever the engine's items, transfers or
    /// errors change; it should only note the fact and return.
    public func addObserver(_ body: @escaping @Sendable () -> Void) -> UUID {
        let id = UUID()
        changeLog.observers[id] = body
        return id
    }

    public func removeObserver(_ id: UUID) { changeLog.observers[id] = nil }

    // MARK: status

    public func status() -> EngineStatus {
        let (up, down) = transfers.report()
        let idle = online && !scheduler.paused && scheduler.isQuiet && transfers.running.isEmpty && pendingOps.isEmpty && unstable == 0
        var s = EngineStatus(state: online ? .online : .offline, idle: idle, account: config.user, server: config.server,
                             device: config.deviceName, container: config.container.string, uploads: up, downloads: down,
                             conflicts: trees.conflictCount(), lastError: lastError, errors: outcomes.errorList(path: trees.path(of:)))
        s.folder = files.rootPath
        s.paused = scheduler.paused ? true : nil
        s.waiting = trees.waitingCount()
        s.watch = watcher == nil ? "the folder is not watched (inotify is unavailable): changes are found by reading it every 30 seconds" : watcher?.notice()
        let joining = self.joining.names
        s.joining = joining.isEmpty ? nil : joining
        if !online, let due = scheduler.delayed?.due {
            s.retryIn = max(0, Double((due - .now).components.seconds) + Double((due - .now).components.attoseconds) / 1e18)
        }
        return s
    }

    /// True when the last pass left nothing to do.
    public func isIdle() -> Bool { status().idle }
}
