import Foundation
import UbiqCore
#if canImport(Glibc)
import Glibc
#endif

/// Text bound for a terminal. What the command line prints comes partly from elsewhere — a
/// setting's value another program wrote, a device's name, a server's error message, a file
/// name — and a terminal takes some characters as commands: an escape sequence can clear the
/// screen, rewrite what was printed, set the window title or, on some terminals, answer back as
/// if typed. Such characters (C0 controls but newline and tab, DEL, C1 controls) and those that
/// reorder what is shown (bidirectional overrides and isolates: `txt.exe` shown as `exe.txt`)
/// are printed as `?`, as `ls` does, when the output is a terminal. Piped or redirected output
/// is left exactly as it is (scripts get the real bytes; `--json` escapes controls anyway).
enum TerminalText {
    /// `text` with every character a terminal would act on shown as `?`.
    static func safe(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isActive) else { return text }
        var out = String.UnicodeScalarView()
        for s in text.unicodeScalars { out.append(isActive(s) ? "?" : s) }
        return String(out)
    }

    /// A JSON document with the characters a terminal acts on written as `\uXXXX` (the same
    /// document: JSON's encoder already escapes C0 controls inside strings, and these can only
    /// be inside strings), so `--json` is safe on a terminal and exact in a pipe.
    static func jsonEscaped(_ json: String) -> String {
        guard json.unicodeScalars.contains(where: isActive) else { return json }
        var out = ""
        for s in json.unicodeScalars {
            if isActive(s) {
                out += String(format: "\\u%04X", s.value)
            } else {
                out.unicodeScalars.append(s)
            }
        }
        return out
    }

    /// True for a character a terminal acts on rather than shows (newlines and tabs are ours).
    static func isActive(_ s: Unicode.Scalar) -> Bool { s != "\n" && s != "\t" && TerminalCharacters.acts(s) }

    static let outputIsTerminal = isatty(1) != 0
    static let errorsGoToTerminal = isatty(2) != 0
}

/// `print` for this module: as `Swift.print`, through ``TerminalText/safe(_:)`` when standard
/// output is a terminal. Every command's output goes through here.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    let text = items.map { "\($0)" }.joined(separator: separator)
    Swift.print(TerminalText.outputIsTerminal ? TerminalText.safe(text) : text, terminator: terminator)
}
