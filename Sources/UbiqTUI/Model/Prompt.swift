import Foundation
import UbiqCore
import UbiqProtocol

/// A text line being typed: the filter, or a key-value add/edit step.
public struct Prompt: Equatable, Sendable {
    public enum Purpose: Equatable, Sendable {
        case filter
        case newKey
        case newType(key: String)
        case value(key: String, type: String, isNew: Bool)
        /// Emptying the trash: the word `empty` must be typed.
        case emptyTrash
        /// The `:` command line.
        case command
        /// A container to add and show (`n` in the container picker).
        case newContainer
        /// A new name for the item at the path; a new folder's name in a folder (nil: the top).
        case rename(RelativePath)
        case newFolder(RelativePath?)
        /// Words the help overlay keeps lines of (`/` in the help).
        case helpFilter
        /// Words the Settings view's keys must contain (`/` in Settings).
        case settingsFilter
        /// Text to find in a version's content (`/` with the content focused).
        case contentSearch
        /// A new name for a key (`r` in Settings).
        case renameKey(from: String)
    }
    public var purpose: Purpose
    public var label: String
    public var text: String
    public var error: String?
    /// The column (1-based, in characters) the error points at: marked in the line.
    public var errorColumn: Int?
    /// Shown when the key being edited changed on another device meanwhile (the draft is kept).
    public var notice: String?
    /// The caret, in characters from the end (0: at the end, where typing and pasting append).
    public var back = 0
    public init(purpose: Purpose, label: String, text: String, error: String? = nil, notice: String? = nil) {
        self.purpose = purpose; self.label = label; self.text = text; self.error = error; self.notice = notice
    }

    /// The caret, in characters from the start.
    public var caret: Int { text.count - back }

    /// Readline keys: ←/→, Home/End and Ctrl-A/E move; Backspace/Delete, Ctrl-U (to the start)
    /// and Ctrl-W (the word before the caret) delete. False for other keys.
    public mutating func edit(_ key: Key) -> Bool {
        let n = text.count
        switch key {
        case .left: back = min(n, back + 1)
        case .right: back = max(0, back - 1)
        case .home, .ctrlA: back = n
        case .end, .ctrlE: back = 0
        case .backspace:
            guard back < n else { return true }
            if back == 0 { text.removeLast() } else { text.remove(at: text.index(text.endIndex, offsetBy: -back - 1)) }
        case .delete:
            guard back > 0 else { return true }
            text.remove(at: text.index(text.endIndex, offsetBy: -back))
            back -= 1
        case .ctrlU:
            text.removeSubrange(..<text.index(text.endIndex, offsetBy: -back))
        case .ctrlW:
            let end = text.index(text.endIndex, offsetBy: -back)
            var start = end
            while start > text.startIndex, text[text.index(before: start)] == " " { start = text.index(before: start) }
            while start > text.startIndex, text[text.index(before: start)] != " " { start = text.index(before: start) }
            text.removeSubrange(start..<end)
        default: return false
        }
        error = nil
        errorColumn = nil
        return true
    }

    /// Types `c` at the caret.
    mutating func insert(_ c: Character) {
        if back == 0 { text.append(c) } else { text.insert(c, at: text.index(text.endIndex, offsetBy: -back)) }
        error = nil
        errorColumn = nil
    }

    /// The most bytes (UTF-8) the line takes: a setting's value may be as big as a setting
    /// (1 MiB with its key), anything else a line of 4 KiB. It was cut at 4,096 characters
    /// without a word, and a longer pasted value was saved cut.
    public var limit: Int {
        if case .value(let key, _, _) = purpose { return KVLimits.maxEntryBytes - key.utf8.count }
        return 4096
    }
}
