import Foundation
import UbiqClient
import UbiqCore
import UbiqEngine
import UbiqServer

/// A randomized run of several real devices (the shipped `SyncEngine`, each with its own home,
/// folder, inotify watcher and push channel) of one account against a real server on loopback:
/// seeded user operations on their folders with faults between them, then the invariants
/// checked once every device has gone quiet. Modelled on Dropbox's Trinity.
///
/// Replay a run with the seed it printed (`UBIQ_SEED`); the operation log says what happened.
public final class FleetRun: @unchecked Sendable {
    public struct Options: Sendable {
        public var devices = 3
        public var operations = 120
        public var faults = true
        /// Longest wait for the devices to agree once the operations are done.
        public var quietTimeout: Duration = .seconds(90)
        /// Copies (one content in two items) fail the run too.
        public var strict = false
        /// Where the servers keep metadata and chunks (a scale-out run: PostgreSQL and a bucket).
        public var database: MetadataLocation = .sqlite
        public var blobs: BlobStoreLocation = .folder
        /// How many servers share them (device i talks to server i mod servers; with several,
        /// every change one device makes reaches the others across servers).
        public var servers = 1
        /// The account is encrypted end to end (every device holds its key; the checks read the
        /// server through `SealedSyncServer`).
        public var encrypted = false
        public init(devices: Int = 3, operations: Int = 120, faults: Bool = true, strict: Bool = false,
                    database: MetadataLocation = .sqlite, blobs: BlobStoreLocation = .folder, servers: Int = 1) {
            self.devices = devices; self.operations = operations; self.faults = faults; self.strict = strict
            self.database = database; self.blobs = blobs; self.servers = max(1, servers)
        }
    }

    /// What a run did and found.
    public struct Report: Sendable {
        public var seed: UInt64
        public var operations = 0
        public var faults = 0
        /// Changes to the folders the failing disks refused (`FailingDisk`).
        public var diskFailures = 0
        public var skipped = 0
        /// Generations of the account key rolled mid-run (an encrypted fleet).
        public var keyRolls = 0
        /// `ubiq rekey` runs on a device mid-run (an encrypted fleet, after a roll).
        public var rekeys = 0
        /// Older versions a user kept from a file's history (`resolve --keep`).
        public var keptOlder = 0
        public var quietAfter: Duration = .zero
        public var files = 0
        public var folders = 0
        /// Broken invariants (empty when the run passed).
        public var failures: [String] = []
        /// Findings that do not fail a run that is not strict.
        public var warnings: [String] = []
        public var log: [String] = []
    }

    let options: Options
    var rng: SeededRandom
    var report: Report
    var servers: [TestServer] = []
    /// The server the checks ask.
    var server: TestServer { servers[0] }
    var devices: [TestDevice] = []
    /// Devices whose engine is paused, and until when.
    var paused: [Int: ContinuousClock.Instant] = [:]
    /// Devices whose network loses requests and answers, and until when.
    var lossy: [Int: ContinuousClock.Instant] = [:]
    /// Devices whose disk fails the engine's changes, and until when.
    var failingDisk: [Int: ContinuousClock.Instant] = [:]
    /// The server that is down (by index), and until when.
    var serverDown: (index: Int, until: ContinuousClock.Instant)?
    var outside: TempDirectory!
    var nextToken = 0, nextName = 0
    /// Each token's last content as written on each device.
    var written: [Int: [Int: [UInt8]]] = [:]
    /// Tokens a user deleted (the file, or a folder holding it, was removed by a user).
    var deleted: Set<Int> = []
    /// Folder names (each unique in a run) a user deleted, with the device that did; and the
    /// devices that did anything in or to each folder (made, renamed, filled, moved it or a
    /// folder holding it) — a deleted folder only its deleter ever touched must stay deleted.
    var deletedFolders: [String: Int] = [:]
    var touchedFolders: [String: Set<Int>] = [:]
    let user = "fleet"
    var checker: (any SyncServer)?
    /// The account's key when `options.encrypted`.
    lazy var accountKey: AccountKey? = options.encrypted ? AccountKey.generate() : nil
    /// Every generation of it rolled so far (`FleetRun+KeyRoll`).
    lazy var ring: AccountKeyring? = accountKey.map { AccountKeyring($0) }
    /// Devices that take the newest ring later, and when.
    var ringDue: [Int: ContinuousClock.Instant] = [:]

    public init(seed: UInt64, options: Options = Options()) {
        self.options = options
        self.rng = SeededRandom(seed: seed)
        self.report = Report(seed: seed)
    }

    /// Runs the whole thing: start, operations, quiet, checks, teardown.
    public func run() async throws -> Report {
        outside = try TempDirectory("ubiq-fleet-outside")
        for _ in 0..<options.servers {
            servers.append(try await TestServer.start(database: options.database, blobs: options.blobs))
        }
        try await server.user(user, quota: 4 << 30)
        for i in 0..<options.devices {
            // Each device talks to its server through a connection that loses things when told to.
            let lossSeed = rng.next(), diskSeed = rng.next()
            let d = try await TestDevice.make(servers[i % servers.count], user: user, name: "dev\(i)", wrap: { LossyServer($0, seed: lossSeed, rate: 0.25) },
                                              disk: FailingDisk(seed: diskSeed, rate: 0.33), accountKey: accountKey)
            (d.server as? LossyServer)?.setLosing(false)
            devices.append(d)
        }
        defer { for d in devices { d.remove() }; outside.remove() }
        for _ in 0..<options.operations {
            try await resumeDue()
            let op = await step()
            report.log.append(op)
        }
        try await resumeAll()
        let quietStart = ContinuousClock.now
        let quiet = await waitQuiet()
        report.quietAfter = ContinuousClock.now - quietStart
        if !quiet { report.failures.append("the devices did not agree within \(options.quietTimeout)") }
        await check()
        report.diskFailures = devices.compactMap { ($0.disk as? FailingDisk)?.failedCount }.reduce(0, +)
        for d in devices { await d.stop() }
        // The last one drops a PostgreSQL test database the others share.
        for s in servers.dropLast() { await s.stop(keepData: true); s.directory.remove() }
        await servers.last?.stop()
        return report
    }

    /// Faults per thousand steps (`UBIQ_FLEET_FAULT_PERMILLE` for soaks with more; 25 by default).
    static let faultPermille = ProcessInfo.processInfo.environment["UBIQ_FLEET_FAULT_PERMILLE"].flatMap(Int.init) ?? 25

    func note(_ s: String) { report.log.append(s) }

    func root(_ d: Int) -> String { devices[d].folder.path }

    func content(token: Int, device: Int) -> [UInt8] {
        let n = Int.random(in: 8...2400, using: &rng)
        var out = Array("t\(token)\n\(device):\(report.operations) ".utf8)
        for _ in 0..<n { out.append(UInt8(ascii: "a") + UInt8.random(in: 0..<26, using: &rng)) }
        return out
    }

    func record(_ d: Int, _ bytes: [UInt8]) {
        guard let t = FleetFiles.token(of: bytes) else { return }
        written[t, default: [:]][d] = bytes
    }

    func newName(_ prefix: String, _ ext: String = "") -> String { nextName += 1; return "\(prefix)\(nextName)\(ext)" }

    /// Runs one randomly chosen step; returns its log line.
    func step() async -> String {
        report.operations += 1
        let roll = Int.random(in: 0..<1000, using: &rng)
        if options.faults && roll < Self.faultPermille { report.faults += 1; return await fault() }
        let d = Int.random(in: 0..<devices.count, using: &rng)
        let (files, folders) = FleetFiles.tree(root(d))
        let parents = ["Documents"] + folders
        func pick<T>(_ a: [T]) -> T? { a.isEmpty ? nil : a[Int.random(in: 0..<a.count, using: &rng)] }
        let r = root(d)
        var op: FleetOp
        var ok = false
        let kind = Int.random(in: 0..<100, using: &rng)
        switch kind {
        case 0..<18:
            let p = pick(parents)! + "/" + newName("f", ".txt")
            nextToken += 1
            let bytes = content(token: nextToken, device: d)
            op = .create(device: d, path: p, token: nextToken)
            ok = FleetFiles.create(r + "/" + p, bytes)
            if ok { record(d, bytes) }
        case 18..<28:
            guard let f = pick(files) else { return "dev\(d) nothing to overwrite" }
            op = .overwrite(device: d, path: f)
            let fresh = content(token: 0, device: d).dropFirst(3)
            let new = FleetFiles.edit(r + "/" + f, truncate: true) { old in
                FleetFiles.token(of: old).map { Array("t\($0)\n".utf8) + fresh }
            }
            if let new { ok = true; record(d, new) }
        case 28..<36:
            guard let f = pick(files) else { return "dev\(d) nothing to append to" }
            op = .append(device: d, path: f)
            let more = Array(" +\(d):\(report.operations)".utf8)
            let new = FleetFiles.edit(r + "/" + f, truncate: false) { old in FleetFiles.token(of: old) == nil ? nil : old + more }
            if let new { ok = true; record(d, new) }
        case 36..<42:
            guard let f = pick(files) else { return "dev\(d) nothing to edit" }
            op = .editInPlace(device: d, path: f)
            let c = UInt8(ascii: "A") + UInt8.random(in: 0..<26, using: &rng)
            let at = Int.random(in: 0..<1000, using: &rng)
            let new = FleetFiles.edit(r + "/" + f, truncate: false) { old in
                guard let t = FleetFiles.token(of: old) else { return nil }
                let head = "t\(t)\n".utf8.count
                guard old.count > head else { return nil }
                var o = old
                o[head + at % (old.count - head)] = c
                return o
            }
            if let new { ok = true; record(d, new) }
        case 42..<50:
            guard let f = pick(files) else { return "dev\(d) nothing to save" }
            op = .atomicSave(device: d, path: f)
            let dir = (f as NSString).deletingLastPathComponent
            let tmp = r + "/" + dir + "/." + newName("save", ".tmp")
            if let old = FleetFiles.read(r + "/" + f), let t = FleetFiles.token(of: old) {
                let new = Array("t\(t)\n".utf8) + content(token: 0, device: d).dropFirst(3)
                if FleetFiles.create(tmp, new) {
                    ok = FleetFiles.replace(tmp, r + "/" + f)
                    if ok { record(d, new) } else { unlink(tmp) }
                }
            }
        case 50..<60:
            guard let f = pick(files), let to = pick(parents) else { return "dev\(d) nothing to move" }
            let name = Bool.random(using: &rng) ? (f as NSString).lastPathComponent : newName("f", ".txt")
            let dst = to + "/" + name
            op = .moveFile(device: d, from: f, to: dst)
            ok = FleetFiles.move(r + "/" + f, r + "/" + dst)
        case 60..<66:
            let p = pick(parents)! + "/" + newName("d")
            op = .mkdir(device: d, path: p)
            ok = mkdir(r + "/" + p, 0o755) == 0
        case 66..<80:
            guard let f = pick(folders), let to = pick(parents) else { return "dev\(d) no folder to move" }
            let name = Int.random(in: 0..<3, using: &rng) == 0 ? newName("d") : (f as NSString).lastPathComponent
            let dst = to + "/" + name
            op = .moveFolder(device: d, from: f, to: dst)
            ok = !dst.hasPrefix(f + "/") && FleetFiles.move(r + "/" + f, r + "/" + dst)
        case 80..<87:
            guard let f = pick(files) else { return "dev\(d) nothing to delete" }
            op = .deleteFile(device: d, path: f)
            ok = remove(d, f)
        case 87..<91:
            guard let f = pick(folders) else { return "dev\(d) no folder to delete" }
            op = .deleteFolder(device: d, path: f)
            ok = remove(d, f)
        case 91..<95:
            let p = pick(parents)! + "/" + newName("f", ".txt")
            nextToken += 1
            let bytes = content(token: nextToken, device: d)
            op = .moveIn(device: d, path: p, token: nextToken)
            let staged = outside.path + "/" + newName("in")
            if FleetFiles.create(staged, bytes) {
                ok = FleetFiles.move(staged, r + "/" + p)
                if ok { record(d, bytes) } else { unlink(staged) }
            }
        case 95..<97:
            return await churn(d, folders)
        case 97:
            guard let f = pick(files) else { return "dev\(d) no version to keep" }
            return await keepOlderVersion(d, f)
        case 98 where options.encrypted:
            return await rollKey()
        case 99 where options.encrypted:
            return await rekey(d)
        default:
            let ms = Int.random(in: 20...400, using: &rng)
            try? await Task.sleep(for: .milliseconds(ms))
            return FleetOp.wait(milliseconds: ms).description
        }
        if !ok { report.skipped += 1 }
        if ok { touch(d, op) }
        // Users do not act all at once: a short gap lets the engines see some steps alone.
        try? await Task.sleep(for: .milliseconds(Int.random(in: 0...40, using: &rng)))
        return op.description + (ok ? "" : " (skipped)")
    }

    /// The user of device `d` keeps an older version of `path` from its history (`resolve
    /// --keep`): on an encrypted account its content is committed again as the newest version,
    /// which no device may take for a rollback.
    func keepOlderVersion(_ d: Int, _ path: String) async -> String {
        guard let p = try? RelativePath(validating: path) else { return "dev\(d) keep-old \(path): not a path" }
        do {
            let history = try await devices[d].engine.versions(of: p).others.filter(\.uploaded)
            guard !history.isEmpty else { return "dev\(d) keep-old \(path): no older version" }
            let kept = history[Int.random(in: 0..<history.count, using: &rng)]
            _ = try await devices[d].engine.resolve(p, keep: kept.id)
            report.keptOlder += 1
            return "dev\(d) keep-old \(path) \(kept.id)"
        } catch {
            return "dev\(d) keep-old \(path): \(error)"
        }
    }

    /// The shape of the resurrected-folders finding (#45): a device's own folder renamed again
    /// and again while a subfolder is made, filled and deleted and the folder itself at last
    /// deleted — each step a user's, with the engines' faults falling between them.
    func churn(_ d: Int, _ folders: [String]) async -> String {
        let r = root(d)
        var log: [String] = []
        func gap() async { try? await Task.sleep(for: .milliseconds(Int.random(in: 30...400, using: &rng))) }
        func act(_ op: FleetOp, _ ok: Bool) { log.append(op.description + (ok ? "" : " (skipped)")); if ok { touch(d, op) } else { report.skipped += 1 } }
        var folder = folders.isEmpty || Bool.random(using: &rng) ? "Documents/" + newName("d") : folders[Int.random(in: 0..<folders.count, using: &rng)]
        if !folders.contains(folder) { act(.mkdir(device: d, path: folder), mkdir(r + "/" + folder, 0o755) == 0) }
        for _ in 0..<Int.random(in: 1...4, using: &rng) {
            let parent = (folder as NSString).deletingLastPathComponent, name = (folder as NSString).lastPathComponent
            let to = parent + "/" + newName("m") + "-" + name
            let ok = FleetFiles.move(r + "/" + folder, r + "/" + to)
            act(.moveFolder(device: d, from: folder, to: to), ok)
            if ok { folder = to }
            await gap()
            if Bool.random(using: &rng) {
                let sub = folder + "/" + newName("d")
                act(.mkdir(device: d, path: sub), mkdir(r + "/" + sub, 0o755) == 0)
                for _ in 0..<Int.random(in: 0...3, using: &rng) {
                    let p = sub + "/" + newName("f", ".txt")
                    nextToken += 1
                    let bytes = content(token: nextToken, device: d)
                    let ok = FleetFiles.create(r + "/" + p, bytes)
                    if ok { record(d, bytes) }
                    act(.create(device: d, path: p, token: nextToken), ok)
                }
                await gap()
                if Bool.random(using: &rng) { act(.deleteFolder(device: d, path: sub), remove(d, sub)); await gap() }
            }
        }
        if Int.random(in: 0..<3, using: &rng) > 0 { act(.deleteFolder(device: d, path: folder), remove(d, folder)) }
        return "churn: " + log.joined(separator: "; ")
    }

    /// Notes which folders (by name) a device's step touched.
    func touch(_ d: Int, _ op: FleetOp) {
        func names(_ path: String) -> [String] { path.split(separator: "/").dropFirst().map(String.init) }
        func mark(_ path: String, itself: Bool = true) {
            let parts = names(path)
            for n in (itself ? parts : Array(parts.dropLast())) { touchedFolders[n, default: []].insert(d) }
        }
        switch op {
        case .mkdir(_, let p): mark(p)
        case .create(_, let p, _), .moveIn(_, let p, _), .overwrite(_, let p), .append(_, let p), .editInPlace(_, let p), .atomicSave(_, let p):
            mark(p, itself: false)
        case .moveFile(_, let f, let t): mark(f, itself: false); mark(t, itself: false)
        case .moveFolder(_, let f, let t):
            mark(f); mark(t)
            for inner in FleetFiles.tree(root(d)).folders where inner.hasPrefix(t + "/") { mark(inner) }
        case .deleteFile(_, let p): mark(p, itself: false)
        default: break
        }
    }

    /// Takes an item out of a device's folder (a user's delete), noting the tokens it held.
    func remove(_ d: Int, _ rel: String) -> Bool {
        let folders = FleetFiles.tree(root(d)).folders.filter { $0 == rel || $0.hasPrefix(rel + "/") }
        let aside = outside.path + "/" + newName("gone")
        guard rename(root(d) + "/" + rel, aside) == 0 else { return false }
        for f in folders { deletedFolders[(f as NSString).lastPathComponent] = d }
        deleted.formUnion(FleetFiles.tokens(under: aside))
        try? FileManager.default.removeItem(atPath: aside)
        return true
    }

    func fault() async -> String {
        let d = Int.random(in: 0..<devices.count, using: &rng)
        switch Int.random(in: 0..<5, using: &rng) {
        case 0:
            guard paused[d] == nil else { return "dev\(d) (paused, no restart)" }
            try? await devices[d].restart()
            return FleetOp.restartEngine(device: d).description
        case 1:
            guard paused[d] == nil else { return "dev\(d) (already paused)" }
            let ms = Int.random(in: 200...3000, using: &rng)
            await devices[d].stop()
            paused[d] = .now + .milliseconds(ms)
            return FleetOp.pauseEngine(device: d, milliseconds: ms).description
        case 2:
            guard lossy[d] == nil, let net = devices[d].server as? LossyServer else { return "dev\(d) (network already lossy)" }
            let ms = Int.random(in: 500...5000, using: &rng)
            net.setLosing(true)
            lossy[d] = .now + .milliseconds(ms)
            return FleetOp.lossyNetwork(device: d, milliseconds: ms).description
        case 3:
            guard failingDisk[d] == nil, let disk = devices[d].disk as? FailingDisk else { return "dev\(d) (disk already failing)" }
            let ms = Int.random(in: 500...5000, using: &rng)
            disk.setFailing(true)
            failingDisk[d] = .now + .milliseconds(ms)
            return FleetOp.failingDisk(device: d, milliseconds: ms).description
        default:
            guard serverDown == nil else { return "(a server is already down)" }
            let ms = Int.random(in: 100...2000, using: &rng)
            let index = Int.random(in: 0..<servers.count, using: &rng)
            await servers[index].stop(keepData: true)
            serverDown = (index, .now + .milliseconds(ms))
            return FleetOp.restartServer(downMilliseconds: ms).description + (servers.count > 1 ? " (server \(index + 1))" : "")
        }
    }

    func resumeDue(all: Bool = false) async throws {
        let now = ContinuousClock.now
        if let (index, until) = serverDown, all || until <= now {
            let old = servers[index]
            servers[index] = try await TestServer.start(directory: old.directory, port: old.port, database: options.database, blobs: options.blobs)
            serverDown = nil
            note(servers.count > 1 ? "server \(index + 1) back" : "server back")
        }
        for (d, until) in lossy where all || until <= now {
            (devices[d].server as? LossyServer)?.setLosing(false)
            lossy[d] = nil
            note("dev\(d) network mended")
        }
        for (d, until) in failingDisk where all || until <= now {
            (devices[d].disk as? FailingDisk)?.setFailing(false)
            failingDisk[d] = nil
            note("dev\(d) disk mended (\((devices[d].disk as? FailingDisk)?.failedCount ?? 0) failed calls so far)")
        }
        for (d, until) in ringDue where all || until <= now {
            takeRing(d)
            ringDue[d] = nil
        }
        for (d, until) in paused where all || until <= now {
            try await devices[d].restart()
            paused[d] = nil
            note("dev\(d) engine back")
        }
    }

    func resumeAll() async throws { try await resumeDue(all: true) }
}
