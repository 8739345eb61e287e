/// Characters a terminal acts on rather than shows: C0 controls, DEL, C1 controls (escape
/// sequences start with them: clearing the screen, setting the window title, answering back as
/// if typed) and the bidirectional overrides, isolates and marks (`txt.exe` shown as
/// `exe.txt`). Text from elsewhere — names, settings, messages — shows them as `?` on a
/// terminal: the front end always, the command line on a terminal.
public enum TerminalCharacters {
    /// True for a character a terminal acts on rather than shows.
    public static func acts(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x00..<0x20, 0x7F..<0xA0, 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: return true
        default: return false
        }
    }
}
