import Foundation
import NIOCore
import UbiqCore
import UbiqProtocol

/// The daemon protocol's framing, shared by the daemon (``DaemonSocket`` in the engine) and
/// the programs that talk to it (the `Ubiquity` library, the front end): one JSON line each
/// way per request; streams send several lines, the last without `event`.
public enum DaemonWire {
    /// The protocol's version, answered to `hello`.
    public static let protocolVersion = 1
    /// The longest request line a daemon reads (16 MiB).
    public static let requestLimit = 16 << 20

    /// Splits what a client sends into lines (without their newline), none longer than
    /// `limit` bytes; a longer one is an error (the connection is answered and closed). Each
    /// byte is looked at once, however the line arrives.
    public struct LineDecoder: ByteToMessageDecoder {
        public typealias InboundOut = ByteBuffer
        public struct TooLong: Error { public let limit: Int }
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

    /// A request that is not one, in a line: where in the JSON and what was wrong.
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

    /// A request line: the request (one key), and beside it, optionally, `"container": "ID"`.
    public static func decodeRequest(_ data: Data) throws -> (DeviceRequest, ContainerID?) {
        guard data.contains(Array("\"container\"".utf8)) else { return (try WireCoding.decode(DeviceRequest.self, from: data), nil) }
        guard var object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { throw Problem.notAnObject }
        guard let value = object.removeValue(forKey: "container") else { return (try WireCoding.decode(DeviceRequest.self, from: data), nil) }
        guard let text = value as? String else { throw Problem.containerNotText }
        let id: ContainerID
        do { id = try ContainerID(validating: text) } catch { throw Problem.badContainer("\(error)") }
        return (try WireCoding.decode(DeviceRequest.self, from: try JSONSerialization.data(withJSONObject: object)), id)
    }

    /// The JSON line of `request` addressed to `container`.
    public static func encodeRequest(_ request: DeviceRequest, container: ContainerID?) -> ByteBuffer {
        guard let container else { return encodeLine(request) }
        guard let data = try? WireCoding.encode(request), var object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { return encodeLine(request) }
        object["container"] = container.string
        var line = (try? JSONSerialization.data(withJSONObject: object)) ?? data
        line.append(0x0A)
        return ByteBuffer(bytes: line)
    }

    enum Problem: Error, CustomStringConvertible {
        case notAnObject, containerNotText
        case badContainer(String)
        var description: String {
            switch self {
            case .notAnObject: return "a request is one JSON object"
            case .containerNotText: return "'container' must be a string"
            case .badContainer(let why): return "'container': \(why)"
            }
        }
    }

    public static func encodeLine<T: Encodable>(_ value: T) -> ByteBuffer {
        var data = (try? WireCoding.encode(value)) ?? Data(#"{"ok":false,"message":"the answer could not be encoded"}"#.utf8)
        data.append(0x0A)
        return ByteBuffer(bytes: data)
    }
}
