import Foundation
import NIOCore
import NIOPosix
import UbiqCore
import UbiqDaemonProtocol
import UbiqProtocol
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's control socket, served with NIO: any number of programs connect at once, each
/// connection carries one ``DeviceRequest`` (one JSON line) and gets its ``DeviceResponse``
/// (stream events first, one per line; the last line has no `event`). A client that closes its
/// end ends its request (a live query stops); one that sends no complete line within 30 s, or a
/// line over 16 MiB, is disconnected. Nothing here blocks a thread: a client that stops
/// reading holds back only its own stream. The protocol is described in `UbiqDaemonProtocol`'s DocC
/// catalog ("The daemon protocol").
public final class DaemonSocket: @unchecked Sendable {
    /// Answers a request addressed to a container (nil: the default one), streaming events
    /// through the closure it is given.
    public typealias Handler = @Sendable (DeviceRequest, ContainerID?, @escaping @Sendable (DeviceResponse) async -> Bool) async -> DeviceResponse
    static let requestDeadline: TimeAmount = .seconds(30)
    let path: String
    let handler: Handler
    private let lock = NSLock()
    private var serving: Task<Void, Never>?

    public init(path: String, handler: @escaping Handler) {
        self.path = path
        self.handler = handler
    }

    static func address(_ path: String) -> sockaddr_un? {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
            raw[bytes.count] = 0
        }
        return addr
    }

    /// Binds (replacing a socket a previous daemon left) and serves until `stop`.
    public func start() async throws {
        guard Self.address(path) != nil else { throw EngineError(.invalidPath, "socket path too long: \(path)") }
        let server: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>
        do {
            server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.backlog, value: 256)
                .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(DaemonWire.LineDecoder(limit: DaemonWire.requestLimit)))
                        try channel.pipeline.syncOperations.addHandler(RequestDeadline(after: Self.requestDeadline))
                        return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw EngineError(.storageFailure, "cannot listen on \(path): \(error)")
        }
        // The state folder is 0700 (nobody else can reach the socket between bind and chmod).
        guard chmod(path, 0o600) == 0 else {
            try? await server.channel.close()
            throw EngineError(.storageFailure, "cannot make \(path) private: \(String(cString: strerror(errno)))")
        }
        let handler = self.handler
        let task = Task<Void, Never> {
            _ = try? await server.executeThenClose { inbound in
                await withDiscardingTaskGroup { group in
                    do {
                        for try await connection in inbound {
                            group.addTask { await Self.serve(connection, handler) }
                        }
                    } catch {}
                    group.cancelAll()
                }
            }
        }
        lock.withLock { serving = task }
    }

    /// Stops listening and ends every open request.
    public func stop() {
        lock.withLock { serving }?.cancel()
        unlink(path)
    }

    /// One connection: its request, answered; the client leaving ends the work for it.
    static func serve(_ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>, _ handler: @escaping Handler) async {
        let channel = connection.channel
        // Only this daemon's own user (the socket is 0600 in a 0700 folder; the kernel's word too).
        let me = getuid()
        if let peer = await PeerCredentials.uid(of: channel), peer != me {
            try? await connection.executeThenClose { _, outbound in
                try? await outbound.write(DaemonWire.encodeLine(DeviceResponse(ok: false, message: "refused: this daemon serves user \(me) only, not user \(peer)")))
            }
            return
        }
        try? await connection.executeThenClose { inbound, outbound in
            await withTaskGroup(of: Void.self) { group in
                var started = false
                do {
                    for try await line in inbound where !started {
                        started = true
                        let request: DeviceRequest, container: ContainerID?
                        do {
                            (request, container) = try DaemonWire.decodeRequest(Data(line.readableBytesView))
                        } catch {
                            try? await outbound.write(DaemonWire.encodeLine(DeviceResponse(ok: false, message: "bad request: \(DaemonWire.describe(error))")))
                            return
                        }
                        group.addTask {
                            let final = await handler(request, container) { r in (try? await outbound.write(DaemonWire.encodeLine(r))) != nil }
                            try? await outbound.write(DaemonWire.encodeLine(final))
                            Self.finish(channel)
                        }
                    }
                } catch let e as DaemonWire.LineDecoder.TooLong {
                    try? await outbound.write(DaemonWire.encodeLine(DeviceResponse(ok: false, message: "bad request: a line over \(e.limit) bytes")))
                } catch {}
                group.cancelAll()  // the client has gone: a stream for it ends
            }
        }
    }

    /// Ends a connection whose final answer is written: its output is shut once every byte of
    /// it has gone (a full close now would drop the rest of a long answer the client has not
    /// read yet); the connection closes when the client closes its end, or after `linger`.
    static func finish(_ channel: Channel) {
        channel.close(mode: .output, promise: nil)
        channel.eventLoop.scheduleTask(in: linger) { channel.close(promise: nil) }
    }

    /// How long a connection whose answer is complete waits for its client to read it all and
    /// close its end.
    static let linger: TimeAmount = .seconds(20)

    /// Closes a connection that has not sent a whole line within `after` of connecting.
    final class RequestDeadline: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias InboundOut = ByteBuffer
        let after: TimeAmount
        var timer: Scheduled<Void>?
        var seen = false

        init(after: TimeAmount) { self.after = after }

        func handlerAdded(context: ChannelHandlerContext) { if context.channel.isActive { arm(context) } }
        func channelActive(context: ChannelHandlerContext) {
            arm(context)
            context.fireChannelActive()
        }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            seen = true
            timer?.cancel()
            timer = nil
            context.fireChannelRead(data)
        }
        func channelInactive(context: ChannelHandlerContext) {
            timer?.cancel()
            timer = nil
            context.fireChannelInactive()
        }

        private func arm(_ context: ChannelHandlerContext) {
            guard timer == nil, !seen else { return }
            let channel = context.channel
            timer = context.eventLoop.scheduleTask(in: after) { channel.close(promise: nil) }
        }
    }
}
