import Foundation
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes

/// The server's connections, each wrapped so that one that never sends a whole first request
/// head cannot hold the server up.
///
/// A connection's HTTP handling starts once its first request head has arrived (that is when
/// it is known whether it upgrades to a WebSocket). Until then it ignores the quiesce event of a
/// graceful shutdown and has no idle timeout, so a client that opens a connection and sends
/// nothing (or a few bytes now and then) would keep the server from stopping, and take a
/// socket, for as long as the client likes (an HTTP client pool keeps a connection it opened
/// for a request cancelled meanwhile idle for 60 s). This wrapper closes such a connection when
/// the server is asked to stop, and when its first head has not arrived within `headTimeout`.
struct SilentConnectionGuarded<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value
    let inner: Inner
    let headTimeout: TimeAmount
    let connections: ConnectionCount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let address = channel.remoteAddress?.ipAddress ?? "?"
        if let full = connections.open(from: address) {
            // Over a cap: closed at once (its HTTP handling never starts).
            logger.warning("connection from \(address) refused: \(full)")
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel)
        }
        let counted = connections
        channel.closeFuture.whenComplete { _ in counted.closed(from: address) }
        let added = channel.eventLoop.makeCompletedFuture {
            // Last of what is there so far: behind TLS (which wraps this setup), so it reads the
            // decrypted request, and before the HTTP handlers the inner setup adds.
            try channel.pipeline.syncOperations.addHandler(SilentConnectionGuard(timeout: headTimeout), position: .last)
        }
        return added.flatMap { inner.setup(channel: channel, logger: logger) }.flatMapThrowing { value in
            // Last, behind the HTTP decoder: a first request the decoder cannot parse is answered
            // with 400 and closed (nothing else would: the upgrade decision waits for a head).
            try channel.pipeline.syncOperations.addHandler(UnparsableFirstRequestCloser())
            return value
        }
    }

    func handle(value: Value, logger: Logger) async { await inner.handle(value: value, logger: logger) }
}

/// How many connections are open, in all and from each address, against caps.
final class ConnectionCount: @unchecked Sendable {
    let limit: Int
    let perAddress: Int
    private let lock = NSLock()
    private var count = 0
    private var byAddress: [String: Int] = [:]

    init(limit: Int, perAddress: Int? = nil) {
        self.limit = limit
        self.perAddress = perAddress ?? max(1, limit / 4)
    }

    /// Counts one more connection from `address`; nil when counted, else which cap is full (then
    /// nothing is counted). One address may hold `perAddress` (#45 row 3: a thousand sockets
    /// from one address locked every user out).
    func open(from address: String) -> String? {
        lock.withLock {
            guard count < limit else { return "\(limit) connections are open" }
            guard byAddress[address, default: 0] < perAddress else { return "\(perAddress) connections from this address are open" }
            count += 1
            byAddress[address, default: 0] += 1
            return nil
        }
    }

    func closed(from address: String) {
        lock.withLock {
            count -= 1
            let left = byAddress[address, default: 1] - 1
            byAddress[address] = left > 0 ? left : nil
        }
    }

    var current: Int { lock.withLock { count } }
}

/// The least a request body must send once it has begun: `bytes` in every `window`.
public struct BodyRate: Sendable {
    public var bytes: Int
    public var window: Duration
    public init(bytes: Int = 1024, window: Duration = .seconds(30)) { self.bytes = bytes; self.window = window }
}

/// Behind the HTTP decoder (one of HTTP1Channel's additional handlers, so a connection upgraded
/// to a push channel never has it): a request whose body sends less than `rate.bytes` in a window of
/// `rate.window` is cut off (#45 row 3: after the head only the idle timer applied, and a byte
/// every 100 s reset it — a socket held for ever). Requests without a body (a push channel's
/// upgrade among them) are never timed.
final class SlowBodyCloser: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Any
    let rate: BodyRate
    private var timer: RepeatedTask?
    private var received = 0

    init(rate: BodyRate) { self.rate = rate }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case let part as HTTPRequestPart:
            switch part {
            case .head(let head):
                let length = head.headerFields[.contentLength].flatMap(Int.init) ?? 0
                if length > 0 || head.headerFields[.transferEncoding] != nil { arm(context) }
            case .body(let buffer): received += buffer.readableBytes
            case .end: disarm()
            }
        default: break
        }
        context.fireChannelRead(data)
    }

    func handlerRemoved(context: ChannelHandlerContext) { disarm() }
    func channelInactive(context: ChannelHandlerContext) { disarm(); context.fireChannelInactive() }

    private func arm(_ context: ChannelHandlerContext) {
        disarm()
        received = 0
        let window = TimeAmount(rate.window), least = rate.bytes
        let loop = context.eventLoop
        // The handler and its context, used on their loop only (the timer is cancelled when the
        // handler goes or the channel closes, which ends the reference).
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: loop)
        timer = loop.scheduleRepeatedTask(initialDelay: window, delay: window) { task in
            let (me, ctx) = bound.value
            if me.received < least {
                task.cancel()
                ctx.close(promise: nil)
            }
            me.received = 0
        }
    }

    private func disarm() {
        timer?.cancel()
        timer = nil
    }
}

/// At the end of a new connection's pipeline: an error before any request part has passed
/// (the HTTP decoder could not parse the first request: `GARBAGE`, a negative or doubled
/// `Content-Length`) is answered with a bare 400 and the connection closed. Once a request
/// has passed, errors go on to the HTTP handling, which answers them itself.
final class UnparsableFirstRequestCloser: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Any
    private var passed = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        passed = true
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !passed else { return context.fireErrorCaught(error) }
        passed = true
        if let first = try? context.pipeline.syncOperations.context(handlerType: SilentConnectionGuard.self) {
            // From the guard, bytes go past the HTTP encoder to TLS (if any) and the socket.
            let answer = "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
            first.writeAndFlush(NIOAny(first.channel.allocator.buffer(string: answer)), promise: nil)
            SilentConnectionGuard.closeUndecided(first)
        } else {
            context.close(promise: nil)
        }
    }
}

/// Closes its connection on a graceful shutdown or after a timeout, unless the first request
/// head (everything up to the first empty line) has arrived; afterwards it only passes
/// everything on.
final class SilentConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    let timeout: TimeAmount
    private var headReceived = false
    /// Whether anything but line ends has arrived.
    private var lineSeen = false
    /// The last bytes seen, to find the head's end (`CR LF CR LF`) across reads.
    private var tail: UInt32 = 0
    private var timer: Scheduled<Void>?

    init(timeout: TimeAmount) { self.timeout = timeout }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { timer?.cancel() }

    /// Closes a connection whose first request was never decided on, telling the handlers
    /// behind this one that the input ended first: the HTTP upgrade handler then gives up as
    /// for a client that went away (logged at `trace`), not with an error per connection.
    static func closeUndecided(_ context: ChannelHandlerContext) {
        context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        context.close(promise: nil)
    }

    private func arm(_ context: ChannelHandlerContext) {
        guard timer == nil, !headReceived else { return }
        let bound = NIOLoopBound((context, self), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: timeout) {
            let (context, handler) = bound.value
            if !handler.headReceived { Self.closeUndecided(context) }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !headReceived {
            let bytes = unwrapInboundIn(data)
            for b in bytes.readableBytesView {
                // Empty lines before the request line are skipped by the parser: they are not a head.
                if !lineSeen {
                    if b == 0x0D || b == 0x0A { continue }
                    lineSeen = true
                }
                tail = tail << 8 | UInt32(b)
                if tail == 0x0D0A_0D0A || tail & 0xFFFF == 0x0A0A {  // lenient parsers take bare LFs too
                    headReceived = true
                    timer?.cancel()
                    timer = nil
                    break
                }
            }
        }
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent, !headReceived {
            Self.closeUndecided(context)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
