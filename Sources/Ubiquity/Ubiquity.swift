@_exported import UbiqCore
import Foundation
import UbiqEngine

/// A program's way to the user's cloud documents and settings on this device, in the spirit of
/// `FileManager`'s ubiquity calls: a container's folder, the account's identity token, moving a
/// file into the cloud, downloading and evicting. Every call is answered by the device's
/// `ubiq daemon` over its socket (the library holds no state of its own), so any number of
/// programs share one engine.
///
/// `Ubiquity.standard` talks to the daemon of the home `ubiq` itself uses (`$UBIQ_HOME`, else
/// the XDG folders); `Ubiquity(home:)` to another one's.
public struct Ubiquity: Sendable {
    let home: DeviceHome
    let client: DaemonClient

    /// The home `ubiq` commands use: `$UBIQ_HOME`, else the XDG locations.
    public static var standard: Ubiquity {
        Ubiquity(resolved: DeviceHome.resolve(explicit: nil, environment: ProcessInfo.processInfo.environment))
    }

    /// The device home rooted at `folder` (what `ubiq --home FOLDER` uses).
    public init(home folder: URL) { self.init(resolved: .rooted(at: folder.standardizedFileURL)) }

    init(resolved home: DeviceHome) {
        self.home = home
        client = DaemonClient(socketPath: home.socketPath)
    }

    /// The daemon's answer to `request` (a refusal is thrown as `.refused`).
    func ask(_ request: DeviceRequest, onEvent: @escaping @Sendable (DeviceResponse) async -> Bool = { _ in true }) async throws -> DeviceResponse {
        let r: DeviceResponse
        do { r = try await client.send(request, onEvent: onEvent) } catch let f as DaemonClient.Failure {
            throw UbiquityError.from(f, home: home.stateDirectory.path)
        }
        guard r.ok else { throw UbiquityError(.refused, r.message ?? "the daemon refused the request") }
        return r
    }

    /// Who the daemon is: its protocol version, account and container.
    func hello() async throws -> DaemonHello {
        guard let h = try await ask(.hello(version: DaemonSocket.protocolVersion, client: "Ubiquity library")).hello else {
            throw UbiquityError(.protocolMismatch, "the daemon did not say who it is (an older ubiq?)")
        }
        guard h.version == DaemonSocket.protocolVersion else {
            throw UbiquityError(.protocolMismatch, "the daemon speaks protocol \(h.version), this library \(DaemonSocket.protocolVersion)")
        }
        return h
    }

    // MARK: Containers and identity

    /// The folder of container `id` on this device (nil: the daemon's own container), or nil
    /// when no daemon runs, the device is signed out, or it does not sync that container.
    public func containerURL(_ id: String? = nil) async -> URL? {
        guard let h = try? await hello(), id == nil || id == h.container else { return nil }
        return URL(fileURLWithPath: h.folder, isDirectory: true)
    }

    /// An opaque token of the signed-in account (the same on every device of that account on
    /// the same server), or nil when no daemon runs or nobody is signed in — like
    /// `ubiquityIdentityToken`. Compare tokens to notice another account.
    public var identityToken: String? {
        get async { try? await hello().identity }
    }

    /// The identity token now and each time it changes: nil when the daemon stops (sign-out
    /// stops it), a token when a daemon runs again (perhaps for another account). Ends when
    /// the consuming task is cancelled. A daemon that has gone is looked for every `retry`.
    public func identityChanges(retry: Duration = .seconds(1)) -> AsyncStream<String?> {
        AsyncStream { continuation in
            let task = Task {
                let last = Locked<String??>(.none)
                let report: @Sendable (String?) -> Void = { token in
                    let changed = last.withLock { l -> Bool in
                        defer { l = .some(token) }
                        return l != .some(token)
                    }
                    if changed { continuation.yield(token) }
                }
                while !Task.isCancelled {
                    _ = try? await client.send(.watchIdentity) { r in
                        if let h = r.hello { report(h.identity) }
                        return true
                    }
                    if Task.isCancelled { break }
                    report(nil)
                    try? await Task.sleep(for: retry)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    // MARK: Items

    /// The container-relative path of a URL inside this device's container, or a clear error.
    func relativePath(_ url: URL) async throws -> (DaemonHello, String) {
        let h = try await hello()
        let folder = URL(fileURLWithPath: h.folder).standardizedFileURL.path
        let path = url.standardizedFileURL.path
        guard path.hasPrefix(folder + "/"), path.count > folder.count + 1 else {
            throw UbiquityError(.notInContainer, "\(path) is not inside the container folder \(folder)")
        }
        let rel = String(path.dropFirst(folder.count + 1))
        do { _ = try RelativePath(validating: rel) } catch { throw UbiquityError(.notInContainer, "\(rel): \(error)") }
        return (h, rel)
    }

    /// Asks the engine to download the item (a folder: everything in it) now, as
    /// `startDownloadingUbiquitousItem`. Returns once the download is queued.
    public func startDownloading(_ url: URL) async throws {
        let (_, rel) = try await relativePath(url)
        _ = try await ask(.download(paths: [rel]))
    }

    /// Removes the local copy of a file (its content stays in the cloud and downloads again
    /// on demand), as `evictUbiquitousItem`. Refused for a file with changes not uploaded.
    public func evict(_ url: URL) async throws {
        let (_, rel) = try await relativePath(url)
        _ = try await ask(.evict(paths: [rel]))
    }

    /// The item's attributes now (download and upload status and progress, conflicts…), or
    /// nil when the engine does not know the path.
    public func status(of url: URL) async throws -> MetadataItem? {
        let (_, rel) = try await relativePath(url)
        let predicate = QueryPredicate.compare(.path, .equal, .string(rel), caseInsensitive: false)
        return try await ask(.list(query: QuerySpec(predicate: predicate.description))).items?.first
    }

    /// Moves a local file into the container (`ubiquitous: true`; `destination` must be inside
    /// the container folder) or out of it (`false`: `item` inside, `destination` outside — the
    /// item leaves the cloud, into the trash there), as `setUbiquitous(_:itemAt:destinationURL:)`.
    /// The destination must not exist. Across file systems the file is copied, flushed, then
    /// the original removed.
    public func setUbiquitous(_ ubiquitous: Bool, item: URL, destination: URL) async throws {
        let h = try await hello()
        let folder = URL(fileURLWithPath: h.folder).standardizedFileURL.path + "/"
        let inside = { (u: URL) in u.standardizedFileURL.path.hasPrefix(folder) }
        if ubiquitous {
            guard inside(destination), !inside(item) else {
                throw UbiquityError(.notInContainer, "moving into the cloud needs a file outside \(folder) and a destination inside it")
            }
            _ = try await relativePath(destination)
        } else {
            guard inside(item), !inside(destination) else {
                throw UbiquityError(.notInContainer, "moving out of the cloud needs a file inside \(folder) and a destination outside it")
            }
        }
        try LocalMove.move(item, to: destination)
    }
}
