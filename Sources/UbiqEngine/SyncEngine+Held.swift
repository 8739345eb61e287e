import Foundation
import UbiqCore

extension SyncEngine {
    /// Settles the files downloads swapped out (see `HeldFiles`): one written after the swap
    /// goes back into the folder beside its document; the others are removed once held
    /// `HeldFiles.holdTime`. Asks for a pass when some are still held. Runs at the end of passes
    /// that placed downloads (and of the first pass, for files held before a restart).
    func settleHeldFiles() {
        guard heldCheckDue else { return }
        let (restored, wait) = steps.settleHeld(now: now().timeIntervalSince1970)
        for (doc, to) in restored {
            logger.warning("\(doc?.string ?? to.name) was written to after a download replaced it: that edit is kept as \(to)")
        }
        if !restored.isEmpty { requestPass() }
        if let wait { requestPass(after: .milliseconds(Int(wait * 1000) + 50)) } else { heldCheckDue = false }
    }
}
