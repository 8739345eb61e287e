import Foundation
import HummingbirdCore
import Logging
import NIOCore

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

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let added = channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(SilentConnectionGuard(timeout: headTimeout), position: .first)
        }
        return added.flatMap { inner.setup(channel: channel, logger: logger) }
    }

    func handle(value: Value, logger: Logger) async { await inner.handle(value: value, logger: logger) }
}

/// Closes its connection on a graceful shutdown or after a timeout, unless the first request
/// head (everything up to the first empty line) has arrived; afterwards it only passes
/// everything on.
final class SilentConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    let timeout: TimeAmount
    private var headReceived = false
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

    private func arm(_ context: ChannelHandlerContext) {
        guard timer == nil, !headReceived else { return }
        let bound = NIOLoopBound((context, self), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: timeout) {
            let (context, handler) = bound.value
            if !handler.headReceived { context.close(promise: nil) }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !headReceived {
            let bytes = unwrapInboundIn(data)
            for b in bytes.readableBytesView {
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
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
