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
    /// A click of the mouse at a cell (the app turns it into what is there: see `ScreenBuffer.hit`).
    case click(x: Int, y: Int)
    /// Selects row `n` of the list shown (what a click on a row becomes).
    case pick(Int)

    /// Keys from a string of characters (tests and scripts).
    public static func typing(_ s: String) -> [Key] { s.map { .char($0) } }
}
