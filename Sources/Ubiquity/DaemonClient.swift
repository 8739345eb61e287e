import Foundation
import NIOCore
import NIOPosix
import UbiqCore
import UbiqDaemonProtocol
import UbiqProtocol

/// A program's side of the daemon's socket, without blocking a thread: each request is one
/// connection; stream events are handed to `onEvent` as they come (return false to stop, which
/// closes the connection and so ends the stream on the daemon's side).
struct DaemonClient: Sendable {
    let socketPath: String
    /// The longest answer line taken (a listing of a large folder is one line).
    static let answerLimit = 512 << 20

    init(socketPath: String) { self.socketPath = socketPath }

    /// Why a request got no answer.
    enum Failure: Error, Sendable, Equatable {
        /// Nothing listens on the socket (no daemon runs for the home).
        case noDaemon(String)
        /// The daemon closed the connection before its final answer, or sent something else.
        case brokenAnswer(String)
        /// The socket, or the process behind it, is another user's: nothing was sent.
        case untrusted(String)
    }

    /// Sends `request` and returns the daemon's final answer.
    func send(_ request: DeviceRequest, container: ContainerID? = nil,
                     onEvent: @escaping @Sendable (DeviceResponse) async -> Bool = { _ in true }) async throws -> DeviceResponse {
        // The daemon is this user's own: the socket file theirs, and the kernel's word on who
        // listens (#45 row 9: a fake daemon in a folder another user can write).
        if let why = PeerCredentials.socketFileDistrust(socketPath) { throw Failure.untrusted(why) }
        let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(unixDomainSocketPath: socketPath) { ch in
                    ch.eventLoop.makeCompletedFuture {
                        try ch.pipeline.syncOperations.addHandler(ByteToMessageHandler(DaemonWire.LineDecoder(limit: Self.answerLimit)))
                        return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: ch)
                    }
                }
        } catch {
            throw Failure.noDaemon("no daemon answers on \(socketPath) (\(error))")
        }
        let peer = await PeerCredentials.uid(of: channel.channel)
        guard peer == getuid() else {
            try? await channel.executeThenClose { _, _ in }
            throw Failure.untrusted(peer.map { "the process listening on \(socketPath) runs as user \($0), not as you (user \(getuid()))" }
                                    ?? "cannot tell who listens on \(socketPath)")
        }
        return try await channel.executeThenClose { inbound, outbound in
            do { try await outbound.write(DaemonWire.encodeRequest(request, container: container)) } catch {
                throw Failure.brokenAnswer("the connection to the daemon broke: \(error)")
            }
            do {
                for try await line in inbound {
                    let r: DeviceResponse
                    do { r = try WireCoding.decode(DeviceResponse.self, from: Data(line.readableBytesView)) } catch {
                        throw Failure.brokenAnswer("the daemon sent something that is not an answer: \(DaemonWire.describe(error))")
                    }
                    if !r.isStreamEvent { return r }
                    if !(await onEvent(r)) { return DeviceResponse(ok: true) }
                }
            } catch let f as Failure {
                throw f
            } catch {
                throw Failure.brokenAnswer("the connection to the daemon broke: \(error)")
            }
            if Task.isCancelled { throw CancellationError() }
            throw Failure.brokenAnswer("the daemon closed the connection without an answer")
        }
    }
}
