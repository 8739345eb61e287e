import CFileSupport
import Foundation
import UbiqClient
import UbiqCore
#if canImport(Glibc)
import Glibc
#endif

/// A chunk's bytes for a download: read from a file of this device, or left in the fetch
/// answer they arrived in.
enum ChunkBytes: Sendable {
    case local([UInt8])
    case fetched(FetchedChunks, Int)

    var count: Int {
        switch self {
        case .local(let b): return b.count
        case .fetched(let f, let i): return f.withBytes(i) { $0.count }
        }
    }

    /// Calls `body` with the bytes (valid only during the call).
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        switch self {
        case .local(let b): return try b.withUnsafeBytes(body)
        case .fetched(let f, let i): return try f.withBytes(i, body)
        }
    }
}
