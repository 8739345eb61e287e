import CNCursesW
import CTuiSupport
import Foundation

/// How colours are drawn.
public enum ColorMode: Equatable, Sendable {
    /// Attributes only (`NO_COLOR`, `--color never`, the mono theme, or a terminal without colour).
    case mono
    /// As many colours as the terminal reports (8, 16, 256, or direct 24-bit).
    case colors(Int)
}

/// The only code that touches curses: starts and restores the terminal, draws a
/// ``ScreenBuffer`` with a theme (redrawing only lines that changed), and reads keys.
@MainActor
public final class CursesTerminal {
    public private(set) var started = false
    public private(set) var mode: ColorMode = .mono
    private var previous: ScreenBuffer?
    private var pairs: [Int64: Int32] = [:]
    private var nextPair: Int32 = 1

    public init() {}

    /// Enters curses mode. `wantColor` false forces monochrome.
    public func start(wantColor: Bool) {
        ubiq_install_crash_restore()
        ubiq_ensure_utf8_locale()
        initscr()
        started = true
        raw()
        noecho()
        nonl()
        keypad(ubiq_stdscr(), true)
        nodelay(ubiq_stdscr(), true)
        set_escdelay(25)
        curs_set(0)
        ubiq_mouse_enable()
        if wantColor && has_colors() {
            start_color()
            use_default_colors()
            mode = .colors(Int(ubiq_colors()))
        } else {
            mode = .mono
        }
        previous = nil
    }

    /// Sets the system clipboard through the terminal (OSC 52), as lazygit and k9s do; terminals
    /// and tmux that do not take it ignore it.
    public func copyToClipboard(_ text: String) {
        let seq = "\u{1B}]52;c;" + Data(text.utf8).base64EncodedString() + "\u{07}"
        seq.utf8CString.withUnsafeBufferPointer { b in _ = write(1, b.baseAddress, b.count - 1) }
    }

    /// Leaves curses mode for a while (another program takes the terminal); `resume` returns.
    public func suspend() {
        guard started else { return }
        started = false
        curs_set(1)
        def_prog_mode()
        endwin()
    }

    /// Back to curses mode after `suspend`, everything redrawn.
    public func resume() {
        guard !started else { return }
        reset_prog_mode()
        started = true
        curs_set(0)
        invalidate()
    }

    /// Leaves curses mode (safe to call more than once).
    public func stop() {
        guard started else { return }
        started = false
        curs_set(1)
        endwin()
    }

    public var size: (width: Int, height: Int) { (Int(ubiq_cols()), Int(ubiq_lines())) }

    /// Forgets what is on the screen (after a resize or Ctrl-L) so the next draw repaints all.
    public func invalidate() {
        previous = nil
        clearok(ubiq_stdscr(), true)
    }

    /// Draws the buffer, line by line where it differs from the last frame.
    public func draw(_ buf: ScreenBuffer, theme: Theme) {
        guard started else { return }
        let full = previous == nil || previous!.width != buf.width || previous!.height != buf.height
        if full { erase() }
        for y in 0..<buf.height {
            if !full, let p = previous, (0..<buf.width).allSatisfy({ p[$0, y] == buf[$0, y] }) { continue }
            var x = 0
            move(Int32(y), 0)
            while x < buf.width {
                let role = buf[x, y].role
                var run = ""
                let runStart = x
                while x < buf.width, buf[x, y].role == role {
                    let cell = buf[x, y]
                    if !cell.isContinuation { run += cell.text }
                    x += 1
                }
                apply(role, theme)
                // The last cell of the screen cannot be written without scrolling on some terminals.
                if y == buf.height - 1 && x == buf.width, !run.isEmpty { run = String(run.dropLast()) }
                mvaddstr(Int32(y), Int32(runStart), run)
            }
        }
        attrset(0)
        previous = buf
        refresh()
    }

    private func apply(_ role: String, _ theme: Theme) {
        let style = theme.style(role)
        var attrs: Int32 = 0
        func add(_ set: Set<TextAttribute>) {
            for a in set {
                switch a {
                case .bold: attrs |= ubiq_a_bold()
                case .dim: attrs |= ubiq_a_dim()
                case .italic: attrs |= ubiq_a_italic()
                case .underline: attrs |= ubiq_a_underline()
                case .reverse: attrs |= ubiq_a_reverse()
                }
            }
        }
        switch mode {
        case .mono:
            add(style.mono)
            attrset(attrs)
        case .colors(let depth):
            add(style.attrs)
            let bg = style.bg ?? theme.style("ui.text").bg
            let pair = self.pair(fg: style.fg?.number(depth: depth) ?? -1, bg: bg?.number(depth: depth) ?? -1)
            attrset(attrs)
            color_set(Int16(pair), nil)
        }
    }

    private func pair(fg: Int, bg: Int) -> Int32 {
        if fg == -1 && bg == -1 { return 0 }
        let key = Int64(fg) << 32 | Int64(UInt32(bitPattern: Int32(bg)))
        if let p = pairs[key] { return p }
        guard nextPair < min(ubiq_color_pairs(), Int32(Int16.max)) else { return 0 }
        let p = nextPair
        nextPair += 1
        init_extended_pair(p, Int32(fg), Int32(bg))
        pairs[key] = p
        return p
    }

    /// Every key waiting (none blocks).
    public func readKeys() -> [Key] {
        var out: [Key] = []
        var ch: wint_t = 0
        while true {
            let r = get_wch(&ch)
            if r == ERR { break }
            if r == KEY_CODE_YES, Int32(ch) == KEY_MOUSE {
                var x: Int32 = 0, y: Int32 = 0
                switch ubiq_mouse_read(&x, &y) {
                case 1: out.append(.click(x: Int(x), y: Int(y)))
                case 2: out += [.up, .up, .up]
                case 3: out += [.down, .down, .down]
                default: break
                }
            } else if r == KEY_CODE_YES {
                if let k = Self.functionKey(Int32(ch)) { out.append(k) }
            } else if let k = Self.charKey(UInt32(ch)) {
                out.append(k)
            }
            if out.count > 4096 { break }
        }
        return out
    }

    static func functionKey(_ code: Int32) -> Key? {
        switch code {
        case KEY_UP: .up
        case KEY_DOWN: .down
        case KEY_LEFT: .left
        case KEY_RIGHT: .right
        case KEY_NPAGE: .pageDown
        case KEY_PPAGE: .pageUp
        case KEY_HOME: .home
        case KEY_END: .end
        case KEY_ENTER: .enter
        case KEY_BACKSPACE: .backspace
        case KEY_DC: .delete
        case KEY_BTAB: .backTab
        case KEY_RESIZE: .resize
        case KEY_F0 + 1: .f1
        case KEY_F0 + 5: .f5
        default: nil
        }
    }

    static func charKey(_ c: UInt32) -> Key? {
        switch c {
        case 1: return .ctrlA
        case 3: return .ctrlC
        case 5: return .ctrlE
        case 23: return .ctrlW
        case 4: return .ctrlD
        case 9: return .tab
        case 10, 13: return .enter
        case 12: return .ctrlL
        case 18: return .ctrlR
        case 26: return .ctrlZ
        case 21: return .ctrlU
        case 27: return .escape
        case 8, 127: return .backspace
        case 0..<32: return nil
        default: return UnicodeScalar(c).map { .char(Character($0)) }
        }
    }
}
