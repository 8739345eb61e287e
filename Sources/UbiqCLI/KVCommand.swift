import ArgumentParser
import Foundation
import UbiqCore
import UbiqEngine
import UbiqProtocol

/// One key as `ubiq kv get --json` / `kv ls --json` print it.
struct KVLine: Encodable {
    var key: String
    var type: String
    var value: PlainKVValue
    var modified: Date
    var device: String
    init?(_ e: KVEntry) {
        guard let v = e.value else { return nil }
        key = e.key; type = v.typeName; value = PlainKVValue(v)
        modified = Date(timeIntervalSince1970: Double(e.stamp.wallMillis) / 1000); device = e.device.description
    }
}

/// `ubiq kv ls|get|set|rm|watch`
struct KVCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "kv", abstract: "The synced key-value store (shared settings).",
                                                    subcommands: [List.self, Get.self, History.self, Set.self, Remove.self, Watch.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "ls", abstract: "Every key with its type and value.")
        @Flag(name: .long, help: "Print one JSON document.") var json = false
        @OptionGroup var home: HomeOption
        func run() async throws {
            let entries = try await DeviceSession.require(home, .kvList).kv ?? []
            if json { try printJSON(entries.compactMap(KVLine.init)); return }
            for e in entries { if let v = e.value { print("\(e.key) (\(v.typeName)) = \(v.displayText)") } }
        }
    }

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "get", abstract: "One key's value.")
        @Argument(help: "The key.") var key: String
        @Flag(name: .long, help: "Print type, value, modified and device as JSON.") var json = false
        @OptionGroup var home: HomeOption
        func run() async throws {
            guard let e = try await DeviceSession.require(home, .kvGet(key: key)).kv?.first, let line = KVLine(e) else {
                throw CLIError(.notFound, "no key '\(key)'")
            }
            if json { try printJSON(line); return }
            print(e.value?.displayText ?? "")
        }
    }

    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "history", abstract: "A key's last writes: when, which device, what value.",
                                                        discussion: "The server keeps each key's last \(KVLimits.historyPerKey) writes, newest first; a delete shows as (deleted).")
        @Argument(help: "The key.") var key: String
        @Flag(name: .long, help: "Print one JSON document (a delete has no value).") var json = false
        @OptionGroup var home: HomeOption
        struct Line: Encodable {
            var modified: Date
            var device: String
            var deviceName: String?
            var type: String?
            var value: PlainKVValue?
        }
        func run() async throws {
            let r = try await DeviceSession.require(home, .kvHistory(key: key))
            let entries = r.kv ?? []
            let names = Dictionary((r.devices ?? []).map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a })
            let lines = entries.map { e in
                Line(modified: Date(timeIntervalSince1970: Double(e.stamp.wallMillis) / 1000), device: e.device.description, deviceName: names[e.device],
                     type: e.value?.typeName, value: e.value.map(PlainKVValue.init))
            }
            if json { try printJSON(lines); return }
            guard !entries.isEmpty else { throw CLIError(.notFound, "no history for '\(key)'") }
            let f = ISO8601DateFormatter()
            for (l, e) in zip(lines, entries) {
                print("\(f.string(from: l.modified))  \(l.deviceName ?? l.device)  \(e.value.map { "(\($0.typeName)) \($0.displayText)" } ?? "(deleted)")")
            }
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "set", abstract: "Set a key (synced to every device).")
        @Argument(help: "The key (1-64 bytes).") var key: String
        @Argument(help: "The value, read as --type says; - reads it from standard input (exactly its bytes; with --type data, raw bytes).") var value: String
        @Option(name: .long, help: "string, int, double, bool, date (ISO-8601), data (base64) or json (arrays and objects).") var type = "string"
        @OptionGroup var home: HomeOption

        func validate() throws {
            guard KVValue.typeNames.contains(type) else { throw ValidationError("--type must be one of \(KVValue.typeNames.joined(separator: ", "))") }
        }

        func run() async throws {
            let v: KVValue
            do {
                if value == "-" {
                    // Values past the 128 KiB an argument may be: from standard input, bounded.
                    let bytes = try KVCommand.standardInputBytes(limit: KVLimits.maxEntryBytes)
                    if type == "data" { v = .data(Data(bytes)) } else {
                        guard let text = String(validating: bytes, as: UTF8.self) else { throw CLIError(.invalidValue, "standard input is not UTF-8 text (use --type data for bytes)") }
                        v = try KVValue.parse(text, type: type)
                    }
                } else {
                    v = try KVValue.parse(value, type: type)
                }
                try KVLimits.check(key: key, value: v)
            } catch let e as CoreError { throw CLIError(e.code, e.message) }
            let r = try await DeviceSession.require(home, .kvSet(values: [key: v]))
            if r.savedLocally == true { print("saved on this device; it goes to the server when it is reachable (\(r.message ?? "offline"))") }
        }
    }

    /// Standard input up to `limit` bytes; past it an error (never read without bound).
    static func standardInputBytes(limit: Int) throws -> [UInt8] {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if n < 0 { if errno == EINTR { continue }; throw CLIError(.invalidRequest, "cannot read standard input: \(String(cString: strerror(errno)))") }
            if n == 0 { return out }
            out += buffer[0..<n]
            if out.count > limit { throw CLIError(.invalidValue, "the value on standard input is over the \(ByteSize.format(Int64(limit))) limit") }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove a key from every device.")
        @Argument(help: "The key.") var key: String
        @OptionGroup var home: HomeOption
        func run() async throws {
            let r = try await DeviceSession.require(home, .kvSet(values: [key: nil]))
            if r.savedLocally == true { print("removed on this device; the server hears of it when it is reachable") }
        }
    }

    struct Watch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "watch", abstract: "Print each change made elsewhere: its reason and keys.")
        @Flag(name: .long, help: "One JSON object per line.") var json = false
        @OptionGroup var home: HomeOption
        func run() async throws {
            let json = self.json
            let r = try await DeviceSession.perform(home, .kvWatch(), live: true) { response in
                if response.ready == true {
                    FileHandle.standardError.write(Data("watching key-value changes (Ctrl-C to stop)\n".utf8))
                    return true
                }
                guard let c = response.kvChange else { return true }
                if json {
                    guard let data = try? WireCoding.encode(c) else { return false }
                    print(String(decoding: data, as: UTF8.self))
                } else {
                    print("\(c.reason.rawValue): \(c.keys.joined(separator: ", "))")
                }
                fflush(nil)
                return true
            }
            if !r.ok { throw CLIError(.invalidRequest, r.message ?? "stopped") }
        }
    }
}
