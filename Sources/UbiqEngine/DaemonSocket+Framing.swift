import Foundation
import NIOCore

extension DaemonSocket {
    /// Splits what a client sends into lines (without their newline), none longer than
    /// `limit` bytes; a longer one is an error (the connection is answered and closed). Each
    /// byte is looked at once, however the line arrives.
    @_spi(DaemonWire)
    public struct LineDecoder: ByteToMessageDecoder {
        public typealias InboundOut = ByteBuffer
        struct TooLong: Error { let limit: Int }
        let limit: Int
        /// How far past the reader index a newline has already been looked for.
        var searched = 0

        public init(limit: Int) { self.limit = limit }

        public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
            let view = buffer.readableBytesView
            guard let newline = view.dropFirst(searched).firstIndex(of: 0x0A) else {
                searched = view.count
                if view.count > limit { throw TooLong(limit: limit) }
                return .needMoreData
            }
            let length = newline - view.startIndex
            searched = 0
            guard length <= limit else { throw TooLong(limit: limit) }
            let line = buffer.readSlice(length: length)!
            buffer.moveReaderIndex(forwardBy: 1)
            context.fireChannelRead(Self.wrapInboundOut(line))
            return .continue
        }

        public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
            while try decode(context: context, buffer: &buffer) == .continue {}
            return .needMoreData
        }
    }

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

    /// A request that is not one, in a line: where in the JSON and what was wrong.
    @_spi(DaemonWire)
    public static func describe(_ error: Error) -> String {
        if let p = error as? Problem { return p.description }
        guard let e = error as? DecodingError else { return "not JSON" }
        func at(_ path: [CodingKey]) -> String { path.isEmpty ? "" : " at \(path.map(\.stringValue).joined(separator: "."))" }
        switch e {
        case .dataCorrupted(let c): return "not JSON\(at(c.codingPath)): \(c.debugDescription.prefix(200))"
        case .keyNotFound(let k, let c): return "'\(k.stringValue)' missing\(at(c.codingPath))"
        case .typeMismatch(_, let c), .valueNotFound(_, let c): return "\(c.debugDescription.prefix(200))\(at(c.codingPath))"
        @unknown default: return "not a request"
        }
    }
}
