import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol
import UbiqEngine
import UbiqServer
import UbiqTesting

/// A server with `alice` and `bob`, and helpers to make devices; everything is removed afterwards.
final class Fleet: @unchecked Sendable {
    let server: TestServer
    var devices: [TestDevice] = []
    /// Each user's account key when the accounts are encrypted end to end.
    let keys: [String: AccountKey]

    private init(server: TestServer, keys: [String: AccountKey]) { self.server = server; self.keys = keys }

    /// `tls`: the server speaks HTTPS only, and the devices trust its authority.
    /// - Parameter blobs: where chunks go, if not where `backend` says.
    static func start(tls: TestCertificates? = nil, backend: Backend = .embedded, blobs: BlobStoreLocation? = nil) async throws -> Fleet {
        guard let database = try await backend.database.fresh() else { throw CoreError(.invalidRequest, "no \(backend) database for the test") }
        let server = try await TestServer.start(tls: tls, database: database, blobs: blobs ?? backend.blobs)
        try await server.user("alice")
        try await server.user("bob")
        let encrypted = backend == .encrypted
        return Fleet(server: server, keys: encrypted ? ["alice": .generate(), "bob": .generate()] : [:])
    }

    func device(_ name: String, user: String = "alice", download: DeviceConfig.DownloadPolicy = .all,
                wrap: ((UbiqAPIClient) -> any SyncServer)? = nil, disk: (any FolderAccess)? = nil,
                fullScanEvery: Duration = FolderScans.standardFullEvery, watchLimit: Int? = nil) async throws -> TestDevice {
        let d = try await TestDevice.make(server, user: user, name: name, download: download, wrap: wrap, disk: disk, accountKey: keys[user],
                                          fullScanEvery: fullScanEvery, watchLimit: watchLimit)
        devices.append(d)
        return d
    }

    /// The server as `d`'s account sees it: through its key when the account is encrypted.
    func view(_ d: TestDevice) -> any SyncServer {
        let plain = UbiqAPIClient(baseURL: server.baseURL, token: d.config.token, trusting: server.trusted)
        guard let key = keys[d.config.user] else { return plain }
        return SealedSyncServer(inner: plain, keys: key.keys(for: d.config.container), container: d.config.container)
    }

    func stop() async {
        let t0 = ContinuousClock.now
        for d in devices { await d.stop(); d.remove() }
        let t1 = ContinuousClock.now
        await server.stop()
        // Diagnostics for a rare slow teardown seen under heavy parallel load.
        if ContinuousClock.now - t0 > .seconds(5) { print("slow teardown: devices \(t1 - t0), server \(ContinuousClock.now - t1)") }
    }
}

func withFleet(tls: TestCertificates? = nil, backend: Backend = .embedded, blobs: BlobStoreLocation? = nil,
               _ body: (Fleet) async throws -> Void) async throws {
    let fleet = try await Fleet.start(tls: tls, backend: backend, blobs: blobs)
    do { try await body(fleet) } catch { await fleet.stop(); throw error }
    await fleet.stop()
}

/// Waits until both devices hold the same files with the same contents.
func converge(_ a: TestDevice, _ b: TestDevice, timeout: Duration = .seconds(30)) async -> Bool {
    await eventually(timeout: timeout) { a.snapshot() == b.snapshot() }
}

func describeDiff(_ a: TestDevice, _ b: TestDevice) -> String {
    let sa = a.snapshot(), sb = b.snapshot()
    let keys = Set(sa.keys).union(sb.keys).sorted()
    return keys.filter { sa[$0] != sb[$0] }.map { k in
        "\(k): A=\(sa[k].map { $0.map { "\($0.count) bytes" } ?? "folder" } ?? "absent") B=\(sb[k].map { $0.map { "\($0.count) bytes" } ?? "folder" } ?? "absent")"
    }.joined(separator: "; ")
}
