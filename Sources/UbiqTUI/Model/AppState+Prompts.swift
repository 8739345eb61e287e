import Foundation
import UbiqCore

/// Keys while a question or a prompt line is open: answering, editing, submitting.
extension AppState {
    // MARK: confirmation and prompts

    mutating func handleConfirm(_ key: Key) -> [Effect] {
        guard let c = confirm else { return [] }
        confirm = nil
        if key == .char("y") || key == .char("Y") { return c.effects }
        flash = Flash(text: "cancelled", level: .info)
        return []
    }

    mutating func handlePrompt(_ key: Key) -> [Effect] {
        guard var p = prompt else { return [] }
        switch key {
        case .escape:
            // A filter typed live is taken back with the prompt.
            switch p.purpose {
            case .filter: try? files.setFilter("")
            case .settingsFilter: settings.filter = ""; settings.cursor = ListCursor()
            case .helpFilter: helpFilter = ""; helpTop = 0
            default: break
            }
            prompt = nil
            return []
        case .ctrlC:
            prompt = nil
            quit = true
            return [.quit]
        case .char(let c):
            // `utf8.count` costs nothing on a native string: a pasted megabyte stays linear.
            if p.text.utf8.count + c.utf8.count <= p.limit {
                p.insert(c)
            } else {
                p.error = "too long: at most \(ByteSize.format(Int64(p.limit))) here; the rest was not taken"
            }
        case .enter:
            return submit(p)
        case .up where p.purpose == .command, .down where p.purpose == .command:
            recall(key == .up ? -1 : 1, &p)
        case .tab where p.purpose == .command:
            complete(&p)
        case .up, .down, .tab, .backTab:
            // A picker where the choices are few: a new key's type, a bool's value.
            let choices: [String]
            switch p.purpose {
            case .newType: choices = KVValue.typeNames
            case .value(_, "bool", _): choices = ["true", "false"]
            default: choices = []
            }
            guard !choices.isEmpty else { break }
            let at = choices.firstIndex(of: p.text.trimmingCharacters(in: .whitespaces).lowercased()) ?? -1
            let step = key == .up || key == .backTab ? -1 : 1
            p.text = choices[((at + step) % choices.count + choices.count) % choices.count]
            p.back = 0
            p.error = nil
        default:
            _ = p.edit(key)
        }
        prompt = p
        filterLive(p)
        return []
    }

    /// Filters follow the typing (#44 row 7: they waited for Enter). A predicate that does not
    /// parse yet (`size >` on its way to `size > 1MB`) leaves the last one that did; Enter
    /// says what is wrong with it.
    mutating func filterLive(_ p: Prompt) {
        switch p.purpose {
        case .filter:
            if p.text != files.filterText { try? files.setFilter(p.text) }
        case .settingsFilter:
            let text = p.text.trimmingCharacters(in: .whitespaces)
            if text != settings.filter { settings.filter = text; settings.cursor = ListCursor() }
        case .helpFilter:
            let text = p.text.trimmingCharacters(in: .whitespaces)
            if text != helpFilter { helpFilter = text; helpTop = 0 }
        default: break
        }
    }

    mutating func submit(_ p: Prompt) -> [Effect] {
        var p = p
        switch p.purpose {
        case .renameKey(let from):
            let to = p.text
            guard to != from else { prompt = nil; return [] }
            do {
                try KVLimits.check(key: to, value: nil)
            } catch let e as CoreError {
                p.error = e.message
                prompt = p
                return []
            } catch { prompt = nil; return [] }
            guard !settings.all.contains(where: { $0.key == to && $0.value != nil }) else {
                p.error = "'\(to)' is taken: delete it first, or pick another name"
                prompt = p
                return []
            }
            guard let value = settings.all.first(where: { $0.key == from })?.value else { prompt = nil; return [] }
            prompt = nil
            settings.toSelect = to
            return [.renameKey(from: from, to: to, value: value)]
        case .contentSearch:
            prompt = nil
            guard var v = versions else { return [] }
            v.search = p.text
            if !p.text.isEmpty { findInContent(&v, fromTop: true) }
            versions = v
            return []
        case .settingsFilter:
            settings.filter = p.text.trimmingCharacters(in: .whitespaces)
            settings.cursor = ListCursor()
            prompt = nil
            return []
        case .helpFilter:
            helpFilter = p.text.trimmingCharacters(in: .whitespaces)
            helpTop = 0
            prompt = nil
            return []
        case .filter:
            do {
                try files.setFilter(p.text)
                prompt = nil
            } catch let e as QueryPredicateError {
                p.error = e.description
                p.errorColumn = e.column
                prompt = p
            } catch {
                p.error = "\(error)"
                prompt = p
            }
            return []
        case .newKey:
            do {
                try KVLimits.check(key: p.text, value: nil)
                prompt = Prompt(purpose: .newType(key: p.text), label: "type of \(p.text) (↑↓ picks: \(KVValue.typeNames.joined(separator: ", ")))", text: "string")
            } catch let e as CoreError {
                p.error = e.message
                prompt = p
            } catch { prompt = nil }
            return []
        case .newType(let key):
            let t = p.text.trimmingCharacters(in: .whitespaces).lowercased()
            guard KVValue.typeNames.contains(t) else {
                p.error = "type must be one of \(KVValue.typeNames.joined(separator: ", "))"
                prompt = p
                return []
            }
            prompt = Prompt(purpose: .value(key: key, type: t, isNew: true), label: "\(key) (\(t))", text: t == "bool" ? "true" : "")
            return []
        case .command:
            return runCommand(p)
        case .newContainer:
            let text = p.text.trimmingCharacters(in: .whitespaces)
            guard let id = try? ContainerID(validating: text) else {
                p.error = "'\(text)' is not a container ID (letters, digits, . _ -; e.g. iCloud.com.example.notes)"
                prompt = p
                return []
            }
            prompt = nil
            return [.switchContainer(id)]
        case .rename(let path):
            let name = p.text.trimmingCharacters(in: .whitespaces)
            if let why = Self.badName(name) { p.error = why; prompt = p; return [] }
            prompt = nil
            return name == path.name ? [] : [.rename(path, to: name)]
        case .newFolder(let folder):
            let name = p.text.trimmingCharacters(in: .whitespaces)
            if let why = Self.badName(name) { p.error = why; prompt = p; return [] }
            guard let target = try? folder.map({ try $0.appending(name) }) ?? RelativePath(validating: name) else { p.error = "'\(name)' cannot be a name here"; prompt = p; return [] }
            prompt = nil
            return [.makeFolder(target)]
        case .emptyTrash:
            guard p.text.trimmingCharacters(in: .whitespaces) == "empty" else {
                p.error = "type the word empty to purge the trash (Esc keeps it)"
                prompt = p
                return []
            }
            prompt = nil
            return [.emptyTrash]
        case .value(let key, let type, let isNew):
            do {
                let v = try KVValue.parse(p.text, type: type)
                try KVLimits.check(key: key, value: v)
                var after: [String: KVValue] = [:]
                for e in settings.all { if let x = e.value { after[e.key] = x } }
                after[key] = v
                try KVLimits.check(store: after)
                prompt = nil
                if isNew { settings.toSelect = key }
                return [.setValue(key: key, value: v)]
            } catch let e as CoreError {
                p.error = e.message
                prompt = p
                return []
            } catch {
                prompt = nil
                return []
            }
        }
    }
}
