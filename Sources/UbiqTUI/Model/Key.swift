/// A key press as the controllers see it (the ncurses driver translates; tests build them).
public enum Key: Equatable, Sendable {
    case char(Character)
    case up, down, left, right, pageUp, pageDown, home, end
    case enter, escape, backspace, delete, tab, backTab
    case ctrlC, ctrlL, ctrlU, ctrlD, ctrlR, ctrlZ
    /// Line editing in prompts: start, end, delete the word before the caret.
    case ctrlA, ctrlE, ctrlW
    case f1, f5
    case resize

    /// Keys from a string of characters (tests and scripts).
    public static func typing(_ s: String) -> [Key] { s.map { .char($0) } }
}
