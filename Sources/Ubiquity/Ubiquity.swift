@_exported import UbiqCore
import Foundation
import UbiqDaemonProtocol

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
    let starter: DaemonStarter

    /// The home `ubiq` commands use: `$UBIQ_HOME`, else the XDG locations.
    public static var standard: Ubiquity {
        Ubiquity(resolved: DeviceHome.resolve(explicit: nil, environment: ProcessInfo.processInfo.environment), homeArgument: nil,
                 autostart: nil, executable: nil)
    }

    /// The device home rooted at `folder` (what `ubiq --home FOLDER` uses). `autostart`: start
    /// the daemon when none runs (nil: as `autostart = true` in `config.toml` says);
    /// `executable`: the `ubiq` program that does (nil: `ubiq` on `PATH`).
    public init(home folder: URL, autostart: Bool? = nil, executable: URL? = nil) {
        self.init(resolved: .rooted(at: folder.standardizedFileURL), homeArgument: folder.standardizedFileURL.path, autostart: autostart,
                  executable: executable)
    }

    /// The same, never starting a daemon: a stream that lost its daemon waits for it to come
    /// back (a daemon stopped on purpose — a sign-out, `systemctl stop` — is not restarted by
    /// every program that was listening to it, once a second).
    var waitingOnly: Ubiquity {
        Ubiquity(resolved: home, homeArgument: starter.homeArgument, autostart: false, executable: starter.executable)
    }

    init(resolved home: DeviceHome, homeArgument: String?, autostart: Bool?, executable: URL?) {
        self.home = home
        client = DaemonClient(socketPath: home.socketPath)
        starter = DaemonStarter(homeArgument: homeArgument, autostart: autostart, executable: executable)
    }

    /// The daemon's answer to `request` (a refusal is thrown as `.refused`). With autostart on,
    /// a daemon that does not run is started first (once; its answer waited for up to 15 s).
    func ask(_ request: DeviceRequest, container: ContainerID? = nil,
             onEvent: @escaping @Sendable (DeviceResponse) async -> Bool = { _ in true }) async throws -> DeviceResponse {
        let r = try await answer(request, container: container, onEvent: onEvent)
        guard r.ok else { throw UbiquityError(.refused, r.message ?? "the daemon refused the request", reason: r.errorCode) }
        return r
    }

    /// Who the daemon is: its protocol version, account and container.
    func hello(container: ContainerID? = nil) async throws -> DaemonHello {
        guard let h = try await ask(.hello(version: DaemonWire.protocolVersion, client: "Ubiquity library"), container: container).hello else {
            throw UbiquityError(.protocolMismatch, "the daemon did not say who it is (an older ubiq?)")
        }
        guard h.version == DaemonWire.protocolVersion else {
            throw UbiquityError(.protocolMismatch, "the daemon speaks protocol \(h.version), this library \(DaemonWire.protocolVersion)")
        }
        return h
    }

    // MARK: Containers and identity

    /// The folder of container `id` on this device (nil: the device's first container), or nil
    /// when no daemon runs, the device is signed out, or `id` is not a container ID. A container
    /// the device does not sync yet is added: its folder is made and syncs from now on (as an
    /// app's first `url(forUbiquityContainerIdentifier:)`).
    public func containerURL(_ id: String? = nil) async -> URL? {
        var container: ContainerID?
        if let id {
            guard let c = try? ContainerID(validating: id) else { return nil }
            container = c
        }
        guard let h = try? await hello(container: container) else { return nil }
        return URL(fileURLWithPath: h.folder, isDirectory: true)
    }

    /// The containers this device syncs (the first is the default).
    public func containers() async throws -> [String] {
        (try await ask(.containers).containers ?? []).map(\.id)
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

    /// Where a URL is: its container and its path in the container folder
    /// (`<root>/<container>/<path>`), or a clear error. Pure: nothing is asked of the daemon.
    struct Located: Sendable {
        let container: ContainerID
        let path: String
        let folder: URL
    }

    func locate(_ url: URL) throws -> Located {
        let root = home.containersRoot.standardizedFileURL.path
        let path = url.standardizedFileURL.path
        guard path.hasPrefix(root + "/") else {
            throw UbiquityError(.notInContainer, "\(path) is not inside a container folder (\(root)/CONTAINER/…)")
        }
        let rest = path.dropFirst(root.count + 1)
        guard let slash = rest.firstIndex(of: "/"), rest.index(after: slash) < rest.endIndex else {
            throw UbiquityError(.notInContainer, "\(path) is a container folder, not an item in one")
        }
        let container: ContainerID
        do { container = try ContainerID(validating: String(rest[..<slash])) } catch {
            throw UbiquityError(.notInContainer, "\(path): '\(rest[..<slash])' is not a container ID")
        }
        let rel = String(rest[rest.index(after: slash)...])
        do { _ = try RelativePath(validating: rel) } catch { throw UbiquityError(.notInContainer, "\(rel): \(error)") }
        return Located(container: container, path: rel, folder: home.containerFolder(container))
    }

    /// Asks the engine to download the item (a folder: everything in it) now, as
    /// `startDownloadingUbiquitousItem`. Returns once the download is queued.
    public func startDownloading(_ url: URL) async throws {
        let at = try locate(url)
        _ = try await ask(.download(paths: [at.path]), container: at.container)
    }

    /// Removes the local copy of a file (its content stays in the cloud and downloads again
    /// on demand), as `evictUbiquitousItem`. Refused for a file with changes not uploaded.
    public func evict(_ url: URL) async throws {
        let at = try locate(url)
        _ = try await ask(.evict(paths: [at.path]), container: at.container)
    }

    /// The item's attributes now (download and upload status and progress, conflicts…), or
    /// nil when the engine does not know the path.
    public func status(of url: URL) async throws -> MetadataItem? {
        let at = try locate(url)
        let predicate = QueryPredicate.compare(.path, .equal, .string(at.path), caseInsensitive: false)
        return try await ask(.list(query: QuerySpec(predicate: predicate.description)), container: at.container).items?.first
    }

    /// Moves a local file into a container (`ubiquitous: true`; `destination` inside a
    /// container folder) or out of it (`false`: `item` inside, `destination` outside — the item
    /// leaves the cloud, into the trash there), as `setUbiquitous(_:itemAt:destinationURL:)`.
    /// The destination must not exist. Across file systems the file is copied, flushed, then
    /// the original removed.
    public func setUbiquitous(_ ubiquitous: Bool, item: URL, destination: URL) async throws {
        let inside = { (u: URL) in (try? self.locate(u)) != nil }
        if ubiquitous {
            guard !inside(item) else { throw UbiquityError(.notInContainer, "\(item.path) is in the cloud already") }
            let at = try locate(destination)
            _ = try await hello(container: at.container)  // a daemon runs, and syncs that container from now on
        } else {
            _ = try locate(item)
            guard !inside(destination) else { throw UbiquityError(.notInContainer, "\(destination.path) is inside a container folder") }
            _ = try await hello()
        }
        // A move across file systems copies and flushes: on a thread of its own, never one of
        // the few that run the program's tasks.
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, Error>) in
            DispatchQueue.global().async { done.resume(with: Result { try LocalMove.move(item, to: destination) }) }
        }
    }
}
