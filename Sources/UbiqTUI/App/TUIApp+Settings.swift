import Foundation
import UbiqCore
import UbiqEngine

extension TUIApp {
    /// Writes settings in one atomic set; when it worked, what the keys held before is kept so
    /// `z` can put it back (one more write, synced like any other).
    /// `then` hears whether it worked, and why not (on the main actor).
    func writeSettings(_ values: [String: KVValue?], what: String, undoable: Bool = true, then: (@MainActor @Sendable (_ ok: Bool, _ why: String?) -> Void)? = nil) {
        var previous: [String: KVValue?] = [:]
        for k in values.keys { previous[k] = .some(state.settings.all.first { $0.key == k }?.value) }
        let connection = self.connection, origin = settingsOrigin
        Task {
            let r = await connection.ask(.kvSet(values: values, origin: origin))
            await self.reloadSettings()
            await MainActor.run {
                if r.ok {
                    if undoable { self.send(.settingsWritten(previous: previous, what: what)) }
                    self.send(.done(r.savedLocally == true ? "\(what) on this device (offline: it goes up when the server is back)" : what))
                } else {
                    self.send(.failed("\(what): not done: \(r.message ?? "refused")"))
                }
                then?(r.ok, r.message)
            }
        }
    }

    /// `E` in Settings: the whole store as TOML in `$VISUAL` / `$EDITOR` (the terminal handed
    /// over), then what the person changed saved in one write on every device. A document that
    /// does not read back, or an editor that failed, saves nothing and keeps the text in its file.
    func editStoreInEditor() {
        let text = SettingsDocument.text(state.settings.all)
        let before: [String: KVValue]
        do { before = try SettingsDocument.parse(text) } catch { send(.failed("cannot write the settings as TOML: \(error)")); return }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ubiq-settings-\(UUID().uuidString.prefix(12))")
        let file = dir.appendingPathComponent("settings.toml")
        do {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try Data(text.utf8).write(to: file, options: .withoutOverwriting)
        } catch {
            send(.failed("cannot write \(file.path): \(error.localizedDescription)"))
            return
        }
        terminal.suspend()
        let status = ExternalProgram.edit(file.path)
        terminal.resume()
        redraw()
        guard status == 0 else { send(.failed("the editor ended with status \(status); nothing saved (your text is in \(file.path))")); return }
        guard let data = try? Data(contentsOf: file), let edited = String(validating: [UInt8](data), as: UTF8.self) else {
            send(.failed("\(file.path) is gone or not UTF-8 text; nothing saved"))
            return
        }
        let after: [String: KVValue]
        do { after = try SettingsDocument.parse(edited) } catch {
            send(.failed("nothing saved: \(error) (your text is in \(file.path))"))
            return
        }
        let changes = SettingsDocument.changes(before: before, after: after)
        guard !changes.isEmpty else {
            try? FileManager.default.removeItem(at: dir)
            send(.done("no setting changed"))
            return
        }
        let names = changes.keys.sorted()
        let summary = names.prefix(3).joined(separator: ", ") + (names.count > 3 ? " and \(names.count - 3) more" : "")
        writeSettings(changes, what: "saved \(names.count) setting\(names.count == 1 ? "" : "s"): \(summary)") { [weak self] ok, why in
            // Kept when the write was refused: the message says where.
            if ok { try? FileManager.default.removeItem(at: dir) } else { self?.send(.failed("nothing saved: \(why ?? "refused") (your text is in \(file.path))")) }
        }
    }
}
