import Foundation

/// One step of a randomized multi-device run: a user's operation on one device's folder, or a
/// fault. Printed in the operation log a failing run leaves behind.
public enum FleetOp: Sendable, CustomStringConvertible {
    case create(device: Int, path: String, token: Int)
    case overwrite(device: Int, path: String)
    case append(device: Int, path: String)
    /// Same size, bytes changed in place (no truncation).
    case editInPlace(device: Int, path: String)
    /// Written to a temporary name, then renamed over the document.
    case atomicSave(device: Int, path: String)
    case moveFile(device: Int, from: String, to: String)
    case mkdir(device: Int, path: String)
    case moveFolder(device: Int, from: String, to: String)
    case deleteFile(device: Int, path: String)
    case deleteFolder(device: Int, path: String)
    /// A file moved into the folder from outside it.
    case moveIn(device: Int, path: String, token: Int)
    case restartEngine(device: Int)
    case pauseEngine(device: Int, milliseconds: Int)
    case restartServer(downMilliseconds: Int)
    /// A quarter of the device's requests, or of the answers to them, are lost for a while.
    case lossyNetwork(device: Int, milliseconds: Int)
    /// A third of the engine's changes to the device's folder fail (`ENOSPC`, `EIO`) for a while.
    case failingDisk(device: Int, milliseconds: Int)
    case wait(milliseconds: Int)

    public var description: String {
        switch self {
        case .create(let d, let p, let t): "dev\(d) create \(p) (t\(t))"
        case .overwrite(let d, let p): "dev\(d) overwrite \(p)"
        case .append(let d, let p): "dev\(d) append \(p)"
        case .editInPlace(let d, let p): "dev\(d) edit-in-place \(p)"
        case .atomicSave(let d, let p): "dev\(d) atomic-save \(p)"
        case .moveFile(let d, let f, let t): "dev\(d) mv \(f) \(t)"
        case .mkdir(let d, let p): "dev\(d) mkdir \(p)"
        case .moveFolder(let d, let f, let t): "dev\(d) mv-folder \(f) \(t)"
        case .deleteFile(let d, let p): "dev\(d) rm \(p)"
        case .deleteFolder(let d, let p): "dev\(d) rm -r \(p)"
        case .moveIn(let d, let p, let t): "dev\(d) move-in \(p) (t\(t))"
        case .restartEngine(let d): "dev\(d) engine restart"
        case .pauseEngine(let d, let ms): "dev\(d) engine paused \(ms) ms"
        case .restartServer(let ms): "server down \(ms) ms"
        case .lossyNetwork(let d, let ms): "dev\(d) network loses requests and answers for \(ms) ms"
        case .failingDisk(let d, let ms): "dev\(d) disk fails a third of the engine's changes for \(ms) ms"
        case .wait(let ms): "wait \(ms) ms"
        }
    }

    /// The operation is a fault rather than a user's step.
    public var isFault: Bool {
        switch self {
        case .restartEngine, .pauseEngine, .restartServer, .lossyNetwork, .failingDisk: true
        default: false
        }
    }
}
