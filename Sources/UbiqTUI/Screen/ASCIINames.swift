import Foundation
import UbiqCore

/// Names as `--ascii` shows them (#44 row 13: `日本語のメモ.txt` and an emoji name came out as
/// `????????????.txt` and `??` — two such names could not be told apart). ASCII stays; each run
/// of other characters becomes its accent-free letters when every one of them has one (`é` →
/// `e`), and is tagged `~` with hex digits of a hash of the run, so names that differ only
/// there still differ on screen: `caf~3b1f.txt`-style for accents kept readable, `~9a41c2.txt`
/// for a run with nothing to fold to.
public enum ASCIINames {
    public static func escape(_ s: String) -> String {
        guard !s.utf8.allSatisfy({ $0 < 0x80 }) else { return s }
        var out = "", run = ""
        func flush() {
            guard !run.isEmpty else { return }
            let hex = ContentHash.of(Array(run.utf8)).hex
            let folded = run.map { ScreenBuffer.ascii(String($0)) }
            if folded.allSatisfy({ $0 != "?" }) {
                out += folded.joined() + "~" + hex.prefix(4)
            } else {
                out += "~" + hex.prefix(6)
            }
            run = ""
        }
        for ch in s {
            if ch.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
                flush()
                out.append(ch)
            } else {
                run.append(ch)
            }
        }
        flush()
        return out
    }
}

extension RenderContext {
    /// A name or path as this screen shows it (escaped with `ASCIINames` under `--ascii`).
    func shown(_ name: String) -> String { ascii ? ASCIINames.escape(name) : name }
}
