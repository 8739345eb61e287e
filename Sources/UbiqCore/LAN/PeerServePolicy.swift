import Foundation

/// A request for chunks from a peer in the room (#40): the ticket the server issued the asking
/// device, the container, the version whose manifest lists the chunks, and the chunks.
public struct PeerChunkRequest: Equatable, Sendable {
    public var ticket: String
    public var container: ContainerID
    public var version: VersionID
    public var hashes: [ContentHash]
    public init(ticket: String, container: ContainerID, version: VersionID, hashes: [ContentHash]) {
        self.ticket = ticket; self.container = container; self.version = version; self.hashes = hashes
    }
}

/// Whether a device serves a peer's chunk request — pure: the ticket check, the clock, the
/// revoked devices and the manifests it holds are given. It serves only when all of these hold:
/// - the ticket is the server's, for this account and the container asked, and holds now;
/// - its device is not one the server said was signed out or revoked;
/// - the connection's TLS key is the one the ticket vouches for (a ticket copied by someone
///   else opens nothing);
/// - the version named is one this device holds the manifest of, in that container, and that
///   manifest lists every chunk asked — a hash alone never suffices (Dropbox's "Dropship": a
///   known hash was a capability to the content);
/// - at most `maxChunks` chunks.
public struct PeerServePolicy: Sendable {
    public let check: PeerTicketCheck
    public let account: String
    public let revoked: Set<DeviceID>
    /// Most chunks one request may ask for.
    public static let maxChunks = 1024

    public init(check: PeerTicketCheck, account: String, revoked: Set<DeviceID>) {
        self.check = check; self.account = account; self.revoked = revoked
    }

    /// The ticket the request may be served under, or why not: `unauthorized` (no valid ticket
    /// of this account, or a revoked device's, or not the connection's key), `forbidden`
    /// (another container, or a chunk the named version does not list), `not_found` (a version
    /// this device does not hold), `invalid_request` (too many chunks).
    public func decide(_ r: PeerChunkRequest, connectionKey: [UInt8], now: Int64,
                       manifest: (ContainerID, VersionID) -> Manifest?) throws -> PeerTicket {
        guard !r.hashes.isEmpty, r.hashes.count <= Self.maxChunks else {
            throw CoreError(.invalidRequest, "a peer request asks for 1-\(Self.maxChunks) chunks")
        }
        let ticket = try check.check(r.ticket, account: account, container: r.container, now: now)
        guard !revoked.contains(ticket.device) else { throw CoreError(.unauthorized, "the peer's device was signed out or revoked") }
        guard ticket.deviceKey == connectionKey else { throw CoreError(.unauthorized, "the peer ticket is another device's") }
        guard let m = manifest(r.container, r.version) else { throw CoreError(.notFound, "no version \(r.version) here") }
        let listed = Set(m.chunks.map(\.hash))
        guard r.hashes.allSatisfy(listed.contains) else {
            throw CoreError(.forbidden, "a chunk asked for is not in version \(r.version)")
        }
        return ticket
    }
}
