import Dispatch
import Foundation
import UbiqCore

extension LocalFiles {
    /// Chunks and hashes files on every core when there are many (a big file already uses two
    /// queues of its own, so a few files stay on this thread).
    static func hashAll(_ jobs: [(ItemID, String, FileStamp)], chunker: Chunker) -> [(ItemID, FileStamp, Result<(Manifest, FileStamp, [UInt8]?)?, Error>)] {
        typealias Hashed = (ItemID, FileStamp, Result<(Manifest, FileStamp, [UInt8]?)?, Error>)
        @Sendable func one(_ job: (ItemID, String, FileStamp)) -> Hashed {
            (job.0, job.2, Result { try LocalFiles.manifest(path: job.1, chunker: chunker, keepingUpTo: Int(TransferBatches.fileLimit)) })
        }
        let workers = min(ProcessInfo.processInfo.activeProcessorCount, jobs.count / 64)
        guard workers > 1 else { return jobs.map(one) }
        // Each worker fills its own slots (interleaved, so one worker does not get all the big
        // files of one folder); no slot is written twice.
        let out = UnsafeMutableBufferPointer<Hashed?>.allocate(capacity: jobs.count)
        out.initialize(repeating: nil)
        defer { out.deallocate() }
        nonisolated(unsafe) let slots = out
        DispatchQueue.concurrentPerform(iterations: workers) { w in
            for i in stride(from: w, to: jobs.count, by: workers) { slots[i] = one(jobs[i]) }
        }
        return (0..<jobs.count).map { (out.baseAddress! + $0).move()! }  // moved out: nothing left to deinitialize
    }
}
