import Foundation

/// The `:` line's memory and completion (#44 row 8): the commands run (at most 50, oldest
/// first, a repeat moved to the end), which one `↑` shows, and what `Tab` completes.
public struct CommandHistory: Equatable, Sendable {
    public private(set) var history: [String] = []
    /// The history entry shown (nil: the line being typed).
    public private(set) var at: Int?
    public static let kept = 50
    /// The command words `Tab` completes.
    public static let commands = ["approve", "conflicts", "container", "files", "help", "kv", "q", "quit", "settings", "sort", "theme", "trash"]
    /// Commands that take a word after them (completed with a space).
    static let takeWords: Set<String> = ["sort", "theme", "container", "approve"]

    public init() {}

    /// A line was run: remembered (once, newest last), and `↑` starts from it again.
    public mutating func ran(_ line: String) {
        at = nil
        let words = line.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        guard !words.isEmpty else { return }
        history.removeAll { $0 == words }
        history.append(words)
        if history.count > Self.kept { history.removeFirst(history.count - Self.kept) }
    }

    /// `↑` (-1) / `↓` (+1): the line to show — an earlier command, or "" past the newest;
    /// nil when nothing was run yet.
    public mutating func recall(_ step: Int) -> String? {
        guard !history.isEmpty else { return nil }
        let next = (at ?? history.count) + step
        if next >= history.count {
            at = nil
            return ""
        }
        at = max(0, next)
        return history[max(0, next)]
    }

    /// `Tab`: the line completed as far as its choices agree (the command word, or a sort
    /// field), and the choices left when several are (nil: nothing matches).
    public static func complete(_ text: String, sortFields: [String]) -> (text: String, choices: [String])? {
        let words = text.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        let (head, choices): (String, [String]) = switch words.count {
        case 1: ("", commands)
        case 2 where words[0] == "sort": ("sort ", sortFields)
        default: ("", [])
        }
        let typed = words.last ?? ""
        let matches = choices.filter { $0.hasPrefix(typed) }
        guard var common = matches.first else { return nil }
        for m in matches.dropFirst() { while !m.hasPrefix(common) { common.removeLast() } }
        let space = matches.count == 1 && head.isEmpty && takeWords.contains(common) ? " " : ""
        return (head + common + space, matches.count > 1 ? matches : [])
    }
}
