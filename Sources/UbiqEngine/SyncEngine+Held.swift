import CFileSupport
import Foundation
import UbiqCore
#if canImport(Glibc)
import Glibc
#endif

extension SyncEngine {
    /// Settles the files downloads swapped out (see `HeldFiles`): one written after the swap
    /// goes back into the folder beside its document; the others are removed once held
    /// `HeldFiles.holdTime`. Asks for a pass when some are still held. Runs at the end of passes
    /// that placed downloads (and of the first pass, for files held before a restart).
    func settleHeldFiles() {
        guard heldCheckDue else { return }
        let found = HeldFiles.list(home.partialFolder(config.container).path, now: now().timeIntervalSince1970)
        var wait: Double?
        for f in found {
            if f.written {
                restoreHeld(f)
            } else if f.age >= HeldFiles.holdTime {
                unlink(f.path)
            } else {
                wait = min(wait ?? .infinity, HeldFiles.holdTime - f.age)
            }
        }
        if let wait { requestPass(after: .milliseconds(Int(wait * 1000) + 50)) } else { heldCheckDue = false }
    }

    /// Puts a held file that was written after its swap back into the folder, beside its
    /// document (see `LocalSteps.putBack`).
    func restoreHeld(_ f: HeldFiles.Found) {
        let doc = local[f.item]?.path ?? synced[f.item]?.node.path ?? remote[f.item]?.node.path
        guard let to = steps.putBack(held: f.path, document: doc) else { return }
        logger.warning("\(doc?.string ?? to.name) was written to after a download replaced it: that edit is kept as \(to)")
        requestPass()
    }
}
