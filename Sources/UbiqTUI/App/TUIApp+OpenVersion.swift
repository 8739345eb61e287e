import Foundation
import UbiqCore
import UbiqEngine

extension TUIApp {
    /// The largest version `o` opens (fetched whole into memory, piece by piece, first).
    static let openLimit = 256 << 20

    /// `o` in Versions: fetches one version whole (1 MiB a request, each chunk verified) into a
    /// private file named after the document — `plan (version from phone 2026-11-18 13.06).txt`,
    /// the extension kept — and opens it with `xdg-open`. The document itself is not touched.
    func openVersion(_ path: RelativePath, _ record: VersionRecord) {
        guard record.size <= Self.openLimit else {
            send(.failed("\(path.name): this version is \(ByteSize.format(Int64(record.size))); o opens versions up to \(ByteSize.format(Int64(Self.openLimit))) (Enter makes it current, b keeps it beside)"))
            return
        }
        let connection = self.connection
        send(.done("fetching \(path.name) from \(record.deviceName)…"))
        // Off the main actor: a version of up to 256 MiB is gathered, chunked, hashed and
        // written here; the screen keeps answering keys meanwhile.
        Task.detached {
            let outcome = await Self.fetchVersion(path, record, connection)
            await MainActor.run {
                switch outcome {
                case .success(let file): self.perform(.open(absolute: file))
                case .failure(let why): self.send(.failed(why.message))
                }
            }
        }
    }

    /// Why a version could not be opened.
    struct OpenFailure: Error { let message: String }

    /// The version's content, fetched piece by piece, checked against its hash and written to a
    /// new private file; its path.
    nonisolated static func fetchVersion(_ path: RelativePath, _ record: VersionRecord, _ connection: DeviceConnection) async -> Result<String, OpenFailure> {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(record.size)
        while bytes.count < record.size {
            let r = await connection.ask(.versionContent(path: path.string, version: record.id.description, limit: 1 << 20, offset: bytes.count))
            guard r.ok, let piece = r.content, !piece.isEmpty else { return .failure(OpenFailure(message: "\(path.name): \(r.message ?? "the version could not be fetched")")) }
            bytes += piece
        }
        // The content hash is over the chunk list, as the engine makes it.
        guard Manifest.of(bytes).hash == record.hash else { return .failure(OpenFailure(message: "\(path.name): the fetched version did not match its hash; nothing opened")) }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ubiq-open-\(UUID().uuidString.prefix(12))")
        let file = dir.appendingPathComponent(versionFileName(path, device: record.deviceName, modified: record.modified))
        do {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try Data(bytes).write(to: file, options: .withoutOverwriting)
        } catch {
            return .failure(OpenFailure(message: "cannot write \(file.path): \(error.localizedDescription)"))
        }
        return .success(file.path)
    }
}
